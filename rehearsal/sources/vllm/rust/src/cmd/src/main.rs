//! vllm-rs, the stand-in of vLLM's Rust frontend binary (rehearsal): the
//! command line only. `vllm-rs --version` names it; `serve` says that the
//! stand-in serves through `vllm serve` (Python) instead.

use std::env;
use std::process::ExitCode;

use anyhow::{bail, Result};

const USAGE: &str = "usage: vllm-rs [--version | --help | serve MODEL [ARGS...]]";

fn main() -> ExitCode {
    match run(env::args().skip(1).collect()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("vllm-rs: {error}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<String>) -> Result<ExitCode> {
    Ok(match args.first().map(String::as_str) {
        Some("--version" | "-V") => {
            println!("vllm-rs {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("--help" | "-h") | None => {
            println!("Rust frontend and managed-engine CLI for vLLM (rehearsal stand-in)");
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Some("serve") if args.len() >= 2 => {
            eprintln!(
                "vllm-rs: the stand-in frontend does not serve {}; run `vllm serve {}`",
                args[1], args[1]
            );
            ExitCode::from(2)
        }
        Some(other) => bail!("unknown command '{other}'"),
    })
}
