#!/usr/bin/env bash
# Report outputs a person opens in another program: the SVG pipeline diagram must be well-formed
# and render with a real renderer (rsvg-convert, from Debian's librsvg2-bin, which tools/check
# installs; xmllint when present), and JSON must parse (python3 when present).
. "$(dirname "$0")/lib.sh"

run_stepsim bubble --pp 4 --microbatches 8 --schedule zb-h1 --comm-ratio 0.25 --svg "$WORK_DIR/zb.svg"
expect_status 0 "bubble --svg"
checks=$((checks + 1))
[ -s "$WORK_DIR/zb.svg" ] || fail "bubble --svg wrote nothing"

if command -v xmllint >/dev/null; then
  checks=$((checks + 1))
  xmllint --noout "$WORK_DIR/zb.svg" 2>"$WORK_DIR/xmllint.err" || fail "xmllint: $(cat "$WORK_DIR/xmllint.err")"
fi
if command -v rsvg-convert >/dev/null; then
  checks=$((checks + 1))
  rsvg-convert "$WORK_DIR/zb.svg" -o "$WORK_DIR/zb.png" 2>"$WORK_DIR/rsvg.err" && [ -s "$WORK_DIR/zb.png" ] ||
    fail "rsvg-convert could not render the SVG: $(cat "$WORK_DIR/rsvg.err")"
else
  echo "note: rsvg-convert not installed (apt-get install librsvg2-bin); render check skipped"
fi

run_stepsim bubble --pp 2 --microbatches 4 --svg /nonexistent-dir/x.svg
expect_status 2 "unwritable --svg"
expect_stderr "stepsim bubble: --svg: cannot write '/nonexistent-dir/x.svg'" "unwritable --svg message"

if command -v python3 >/dev/null; then
  run_stepsim bubble --pp 8 --microbatches 16 --schedule gpipe --json
  checks=$((checks + 1))
  printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert abs(d["formula_bubble"]-7/23)<1e-12' ||
    fail "bubble --json does not parse or has the wrong formula_bubble: $out"
fi

finish
