#!/bin/sh
# mkwheel.sh - write a minimal pure-Python wheel with busybox applets only
# (no python, no zip): the ZIP is built by hand, STORED, little-endian
# headers written as hex through `xxd -r -p`.
#
#   mkwheel.sh DIST VERSION OUTDIR [MODULE_TEXT]
#
# Writes OUTDIR/<dist>-<VERSION>-py3-none-any.whl holding <module>/__init__.py
# (MODULE_TEXT, default 'BUILD_INFO = {}') and the dist-info files METADATA,
# WHEEL and RECORD. Same inputs give byte-identical output.
set -eu

usage() {
  echo "usage: mkwheel.sh DIST VERSION OUTDIR [MODULE_TEXT]" >&2
  exit 1
}
die() {
  echo "mkwheel.sh: error: $*" >&2
  exit 1
}

[ $# -ge 3 ] && [ $# -le 4 ] || usage
dist=$1
version=$2
outdir=$3
default_text='BUILD_INFO = {}'
text=${4-$default_text}
case $dist in '' | *[!A-Za-z0-9._-]*) die "bad DIST '$dist'" ;; esac
case $version in '' | *[!A-Za-z0-9.+!]*) die "bad VERSION '$version'" ;; esac

# PEP 427 name: runs of - _ . become _; module: lowercase, - becomes _.
name=$(printf '%s' "$dist" | sed -E 's/[-_.]+/_/g')
module=$(printf '%s' "$dist" | tr 'A-Z-' 'a-z_')
info=$name-$version.dist-info
whl=$outdir/$name-$version-py3-none-any.whl

mkdir -p "$outdir"
stage=$outdir/.mkwheel.$$
tmp=$whl.tmp.$$
trap 'rm -rf "$stage" "$tmp"' EXIT
mkdir -p "$stage/$module" "$stage/$info"

# --- the files, in archive order ---------------------------------------------
printf '%s\n' "$text" >"$stage/$module/__init__.py"
printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$dist" "$version" \
  >"$stage/$info/METADATA"
printf 'Wheel-Version: 1.0\nGenerator: mkwheel.sh\nRoot-Is-Purelib: true\nTag: py3-none-any\n' \
  >"$stage/$info/WHEEL"
entries="$module/__init__.py $info/METADATA $info/WHEEL $info/RECORD"

size() { echo $(($(wc -c <"$1"))); }

# RECORD: path,sha256=<urlsafe b64 of the raw digest, unpadded>,size
for path in $entries; do
  if [ "$path" = "$info/RECORD" ]; then
    echo "$path,,"
  else
    digest=$(sha256sum <"$stage/$path" | cut -c1-64 | xxd -r -p | base64 | tr '+/' '-_' | tr -d '=\n')
    echo "$path,sha256=$digest,$(size "$stage/$path")"
  fi
done >"$stage/$info/RECORD"

# --- ZIP ---------------------------------------------------------------------
# Little-endian hex of a 16- or 32-bit number.
le16() { printf '%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)); }
le32() { le16 $(($1 & 65535)); le16 $(($1 >> 16 & 65535)); }

# Fixed DOS time 00:00 and date 1980-01-01 ((0 << 9) | (1 << 5) | 1).
dostime=$(le16 0)$(le16 33)
offset=0    # where the next local header starts
central=''  # central directory, as hex
count=0

: >"$tmp"
for path in $entries; do
  file=$stage/$path
  len=$(size "$file")
  # busybox crc32 prints 8 lowercase hex digits (then the name, if given one).
  crc=$(crc32 <"$file" | cut -c1-8)
  namehex=$(printf '%s' "$path" | xxd -p | tr -d '\n')
  namelen=$(($(printf '%s' "$path" | wc -c)))
  # version 2.0, no flags, method 0 (STORED), time, crc, sizes, name length
  common=$(le16 20)$(le16 0)$(le16 0)$dostime$(le32 $((0x$crc)))$(le32 "$len")$(le32 "$len")$(le16 "$namelen")
  # local file header (extra length 0), name, data
  printf '%s' "$(le32 0x04034b50)$common$(le16 0)$namehex" | xxd -r -p >>"$tmp"
  cat "$file" >>"$tmp"
  # central entry: made by 2.0 (MS-DOS), extra/comment/disk/attrs 0, offset
  central=$central$(le32 0x02014b50)$(le16 20)$common$(le16 0)$(le16 0)$(le16 0)$(le16 0)$(le32 0)$(le32 "$offset")$namehex
  offset=$((offset + 30 + namelen + len))
  count=$((count + 1))
done
cdsize=$((${#central} / 2))
# central directory, then end of central directory (one disk, no comment)
printf '%s' "$central$(le32 0x06054b50)$(le16 0)$(le16 0)$(le16 "$count")$(le16 "$count")$(le32 "$cdsize")$(le32 "$offset")$(le16 0)" |
  xxd -r -p >>"$tmp"

mv "$tmp" "$whl"
echo "$whl"
