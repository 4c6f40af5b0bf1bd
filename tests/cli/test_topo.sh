# stepsim topo show / import end to end: exit codes, whole error messages, and the round trip
# import -> file -> show on a pasted matrix.
. "$SOURCE_DIR/tests/cli/lib.sh"
data="$SOURCE_DIR/tests/hardware/data"

run_stepsim topo show dgx-a100 --nodes 2 --dot "$WORK_DIR/dgx.dot"
expect_status 0 "topo show of a preset"
expect_stdout_contains "dgx-a100: 16 GPUs (A100-SXM4-80GB), 2 servers x 8 GPUs" "topo show headline"
expect_stdout_contains "GPU0   X     NV12  NV12" "NVSwitch codes"
expect_stdout_contains "  infiniband  16     25 GB/s" "HDR links in the summary"
checks=$((checks + 1))
grep -q 'graph "dgx-a100"' "$WORK_DIR/dgx.dot" || fail "--dot writes a Graphviz graph"

run_stepsim topo show a100-pcie --gpus 4
expect_status 0 "a preset with another GPU count"
expect_stdout_contains "GPU0  X     PIX   SYS   SYS" "4 A100 PCIe over two sockets"

run_stepsim topo show dgx-a10
expect_status 2 "unknown preset"
expect_stderr "unknown hardware preset 'dgx-a10'; did you mean 'dgx-a100'? (presets: a100-pcie, dgx-2, dgx-a100, dgx-b200, dgx-h100, gb200-nvl72, h100-pcie-nvlink, hgx-h20, hgx-h200, l40s-pcie, mi300x-oam, rtx3090-nvlink, rtx4090, rtx5090, rtx6000ada-pcie; or give a path to a hardware YAML file)" "unknown preset message"

run_stepsim topo import "$data/topo_8x_pcie_two_sockets_written.txt" --gpu A100-PCIE-80GB -o "$WORK_DIR/box.yaml"
expect_status 0 "topo import to a file"
run_stepsim topo show "$WORK_DIR/box.yaml"
expect_status 0 "topo show of the imported file"
expect_stdout_contains "GPU0  X     PIX   PXB   PXB   SYS   SYS   SYS   SYS" "round trip: the pasted GPU0 row"
expect_stdout_contains "GPU6  SYS   SYS   SYS   SYS   PXB   PXB   X     PIX" "round trip: the pasted GPU6 row"

printf '\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPXB\t X \n' >"$WORK_DIR/bad.txt"
run_stepsim topo import "$WORK_DIR/bad.txt" --gpu A100
expect_status 2 "an asymmetric matrix"
expect_stderr "$WORK_DIR/bad.txt:3:6: GPU1 to GPU0 is PXB, but GPU0 to GPU1 is PIX (line 2); the matrix must be symmetric" "asymmetric message"

run_stepsim topo import "$data/topo_dgx_h100_written.txt" --gpu h10
expect_status 2 "an unknown GPU"
expect_stderr "gpu: unknown GPU 'h10'; did you mean 'h100'? (known GPUs: V100-SXM2-16GB, V100-SXM2-32GB, A100-SXM4-40GB, A100-SXM4-80GB, A100-PCIE-40GB, A100-PCIE-80GB, H100-SXM5-80GB, H100-PCIE-80GB, H200-SXM-141GB, H800-SXM5-80GB, L40S, RTX-A6000, RTX-4090, RTX-5090, RTX-3090, B200-SXM-180GB, GB200, H20, RTX-6000-Ada, MI300X)" "unknown GPU message"

run_stepsim topo frob
expect_status 2 "an unknown subcommand"
expect_stderr "stepsim topo: expected 'show' or 'import', found 'frob' (see stepsim topo --help)" "unknown subcommand message"

finish
