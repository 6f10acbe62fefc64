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


def initial_seed():
    """The seed the default generator was last seeded with (None if seeded from entropy), as torch.initial_seed."""
    return default_generator.initial_seed()


def seed():
    """Seed the default generator from fresh entropy and return that seed, as torch.seed."""
    s = int(np.random.SeedSequence().entropy % (2**63))
    default_generator.manual_seed(s)
    return s


def get_rng_state():
    """The default generator's state, as torch.get_rng_state; give it back to
    [`set_rng_state()`][minigrad.set_rng_state].

    It is the NumPy bit generator's state (a dict, which mg.save stores), not PyTorch's byte tensor:
    treat it as opaque.
    """
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore a state returned by [`get_rng_state()`][minigrad.get_rng_state], as torch.set_rng_state."""
    default_generator.set_state(new_state)


def get_rng(generator=None):
    """The numpy Generator to draw from: the given mg.Generator's, or the default one's."""
    return (generator or default_generator).rng
