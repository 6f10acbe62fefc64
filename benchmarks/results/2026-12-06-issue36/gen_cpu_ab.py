"""CPU time per generated token (process_time, min and median of 12 generate() calls of 64 tokens,
one process): python gen_cpu_ab.py <checkout>. A steadier figure than wall time on a loaded host."""
import sys, time
root = sys.argv[1]
sys.path.insert(0, root); sys.path.insert(0, root + '/benchmarks')
import bench_gpt as B
import minigrad as mg
assert mg.__file__.startswith(root), mg.__file__
step, _ = B.minigrad_step({"mode": "generate"})
step()
ts = []
for _ in range(12):
    c = time.process_time(); step(); ts.append((time.process_time() - c) / 64 * 1e3)
print(root, f"min {min(ts):.2f} ms/token cpu, median {sorted(ts)[6]:.2f}")
