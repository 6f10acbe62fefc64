"""Random number generation: mg.manual_seed and mg.Generator, backed by NumPy's PCG64."""
import numpy as np


class Generator:
    """A source of random numbers, as torch.Generator.

    Example:
        >>> g = mg.Generator().manual_seed(0)
        >>> mg.rand(3, generator=g)
    """

    def __init__(self, seed=None):
        self._seed = seed
        self.rng = np.random.default_rng(seed)

    def manual_seed(self, seed):
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self.rng.bit_generator.state

    def set_state(self, state):
        self.rng.bit_generator.state = state
        return self


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator (used by every random function given no generator=)."""
    return default_generator.manual_seed(seed)


def get_rng(generator=None):
    """The numpy Generator to draw from: the given mg.Generator's, or the default one's."""
    return (generator or default_generator).rng
