"""tests/complex compare with PyTorch on tiny tensors: one PyTorch thread, restored after each module."""
import pytest


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """torch.fft (and PyTorch's first complex kernels) on tiny inputs cost ~40 ms a call with two
    threads on a busy machine, microseconds with one."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
