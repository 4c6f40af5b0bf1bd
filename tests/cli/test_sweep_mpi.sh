# `mpirun -np N stepsim sweep`: the processes split the plans (rank r runs shard r+1 of N) and rank 0
# prints the table, CSV and JSON one process prints, byte for byte. Needs Open MPI (the setup
# installs it); a binary built without it says so in `stepsim version`, and then this test fails
# where mpirun exists (Open MPI is there but was not built in) and is skipped where it does not.
. "$SOURCE_DIR/tests/cli/lib.sh"

run_stepsim version
case "$out" in
  *"(MPI sweeps)"*) ;;
  *) if command -v mpirun >/dev/null; then fail "mpirun is installed but stepsim was built without MPI: $out"; fi
     finish; exit ;;
esac
# Open MPI refuses to start as root unless told; CI containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cat >"$WORK_DIR/small.yaml" <<'YAML'
name: small sweep
hardware: {preset: dgx-a100, gpus: 4}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 16}
sweep: {tp: [1, 2], pp: [1, 2], micro_batch: [1, 4], recompute: [none]}
YAML
run_stepsim sweep "$WORK_DIR/small.yaml" --threads 1 --top 5 --csv "$WORK_DIR/one.csv" --json "$WORK_DIR/one.json"
expect_status 0 "one process"
single="$out"

for n in 2 3; do
  out=$(mpirun --oversubscribe -np "$n" "$STEPSIM" sweep "$WORK_DIR/small.yaml" --threads 1 --top 5 \
          --csv "$WORK_DIR/mpi$n.csv" --json "$WORK_DIR/mpi$n.json" 2>"$WORK_DIR/stderr") && status=0 || status=$?
  err=$(cat "$WORK_DIR/stderr")
  expect_status 0 "mpirun -np $n"
  checks=$((checks + 1))
  [ "$out" = "$single" ] || fail "$n processes print what one prints: $out"
  checks=$((checks + 1))
  cmp -s "$WORK_DIR/one.csv" "$WORK_DIR/mpi$n.csv" || fail "$n processes write the CSV of one"
  checks=$((checks + 1))
  cmp -s "$WORK_DIR/one.json" "$WORK_DIR/mpi$n.json" || fail "$n processes write the JSON of one"
done

out=$(mpirun --oversubscribe -np 2 "$STEPSIM" sweep "$WORK_DIR/small.yaml" --shard 1/2 2>"$WORK_DIR/stderr") && status=0 || status=$?
err=$(cat "$WORK_DIR/stderr")
expect_status 2 "--shard under mpirun"
expect_stderr_contains "--shard: under mpirun the processes split the plans among them; give one or the other" "--shard under mpirun message"

finish
