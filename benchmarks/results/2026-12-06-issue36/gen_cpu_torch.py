"""The same for PyTorch (one thread): python gen_cpu_torch.py <checkout>."""
import sys, time
root = sys.argv[1]; sys.path.insert(0, root); sys.path.insert(0, root + '/benchmarks')
import torch; torch.set_num_threads(1)
import bench_gpt as B
step, _ = B.torch_step({"mode": "generate"})
step()
ts = []
for _ in range(12):
    c = time.process_time(); step(); ts.append((time.process_time() - c) / 64 * 1e3)
print("torch", f"min {min(ts):.2f} ms/token cpu, median {sorted(ts)[6]:.2f}")
