"""Python function calls per generated token (cProfile's count: deterministic, unlike the times on a
shared host): python gen_calls.py <checkout>."""
import cProfile
import pstats
import sys

root = sys.argv[1]
sys.path.insert(0, root)
sys.path.insert(0, root + '/benchmarks')
import bench_gpt as B  # noqa: E402

step, _ = B.minigrad_step({"mode": "generate"})
step()
pr = cProfile.Profile()
pr.enable()
step()
pr.disable()
st = pstats.Stats(pr)
print(f"{st.total_calls / B.NEW_TOKENS:.0f} Python calls per token ({st.prim_calls / B.NEW_TOKENS:.0f} primitive)")
