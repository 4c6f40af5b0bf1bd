#!/usr/bin/env bash
# README.md's example output is the binary's own: tools/readme_example --check passes on the
# README as shipped and fails, naming the difference, when a number in it no longer matches.
. "$(dirname "$0")/lib.sh"

checks=$((checks + 1))
STEPSIM="$STEPSIM" "$SOURCE_DIR/tools/readme_example" --check >check.out 2>&1 ||
  fail "README.md's example output is not the binary's: $(cat check.out)"

# A README whose step time drifted by a tenth of a millisecond.
sed 's/^step time                     \([0-9]*\)\.\([0-9]\) ms/step time                     \1.9 ms/' \
  "$SOURCE_DIR/README.md" >drifted.md
checks=$((checks + 1))
cmp -s drifted.md "$SOURCE_DIR/README.md" && fail "the test's edit did not change the README copy"
checks=$((checks + 1))
if README=drifted.md STEPSIM="$STEPSIM" "$SOURCE_DIR/tools/readme_example" --check >drift.out 2>&1; then
  fail "--check passed on a README whose step time drifted"
fi
checks=$((checks + 1))
grep -q "run tools/readme_example --write" drift.out || fail "--check did not say how to refresh: $(cat drift.out)"
finish
