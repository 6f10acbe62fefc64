"""REINFORCE with a learned baseline on CartPole, with mg.distributions.Categorical (Williams, 1992).

    python examples/reinforce.py                       # the default run (see README for its figure)
    python examples/reinforce.py --episodes 20 --out /tmp/rl   # a smoke run

The environment is the classic cart-pole (Barto, Sutton & Anderson, 1983), written below with
the equations and constants of gym's CartPole-v1: a pole hinged on a cart, pushed left or right
with a force of 10 N every 0.02 s; an episode ends when the pole leans more than 12 degrees,
the cart leaves [-2.4, 2.4], or after 500 steps. Every step earns a reward of 1, so the return of
an episode is its length (at most 500).

The policy is an MLP from the 4 observations (cart position and velocity, pole angle and angular
velocity) to 2 logits: ``Categorical(logits=policy(obs))``, from which actions are sampled. After
each episode the policy gradient

    grad J = E[ sum_t grad log pi(a_t | s_t) * (G_t - b(s_t)) ]

is followed, with G_t the discounted return from step t (--gamma) and b(s) a value network (the
baseline, or critic) fitted to G_t by least squares: subtracting it leaves the gradient unbiased
and lowers its variance. The advantages G_t - b(s_t) are standardised per episode.
(An episode cut at 500 steps is treated as if it ended there, the usual simplification: the
returns of its last steps are then underestimated, which the standardisation makes harmless here.)

Training stops when the mean return of the last 20 episodes reaches --target (gym's "solved"
threshold for CartPole-v1 is 475), or after --episodes episodes. ``--out DIR`` gets
``returns.png`` (each episode's return and the 20-episode mean; matplotlib is optional) and
``checkpoint.mg`` (the policy, the value network and the returns, written with mg.save).
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

import minigrad as mg  # noqa: E402
import minigrad.nn as nn  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from minigrad._optional import install_hint  # noqa: E402  (the pip extra that installs a package)
from minigrad.distributions import Categorical  # noqa: E402

PNG = "returns.png"
WINDOW = 20  # episodes in the running mean


class CartPole:
    """The cart-pole system of gym's CartPole-v1: explicit Euler steps of the equations of motion
    of Barto, Sutton & Anderson (1983), as corrected by Florian (2007) for the pole's inertia."""

    gravity, mass_cart, mass_pole = 9.8, 1.0, 0.1
    half_length = 0.5            # half the pole's length (m)
    force_mag, dt = 10.0, 0.02   # N, s
    theta_limit = 12 * 2 * math.pi / 360   # 12 degrees
    x_limit = 2.4
    max_steps = 500

    def __init__(self, rng):
        self.rng = rng  # a NumPy Generator: the initial states

    def reset(self):
        """A fresh episode: all four state variables uniform in [-0.05, 0.05]."""
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        self.steps = 0
        return self.state.astype(np.float32)

    def step(self, action):
        """Push left (action 0) or right (1) for dt seconds. Returns (observation, reward, done)."""
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        total_mass = self.mass_cart + self.mass_pole
        pole_ml = self.mass_pole * self.half_length
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + pole_ml * theta_dot ** 2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.mass_pole * cos ** 2 / total_mass))
        x_acc = temp - pole_ml * theta_acc * cos / total_mass
        # explicit Euler, in gym's order: positions from the old velocities
        x, x_dot = x + self.dt * x_dot, x_dot + self.dt * x_acc
        theta, theta_dot = theta + self.dt * theta_dot, theta_dot + self.dt * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        self.steps += 1
        fell = abs(x) > self.x_limit or abs(theta) > self.theta_limit
        return self.state.astype(np.float32), 1.0, fell or self.steps >= self.max_steps


def mlp(n_out, hidden=128):
    return nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, n_out))


def discounted_returns(rewards, gamma):
    """G_t = r_t + gamma * r_{t+1} + gamma^2 * r_{t+2} + ... for every step t of an episode."""
    out, g = np.zeros(len(rewards), dtype=np.float32), 0.0
    for t in reversed(range(len(rewards))):
        g = rewards[t] + gamma * g
        out[t] = g
    return out


def run_episode(env, policy):
    """Play one episode with actions sampled from the policy; returns (states, actions, rewards)."""
    states, actions, rewards = [], [], []
    obs, done = env.reset(), False
    with mg.no_grad():  # acting needs no graph: the log-probabilities are recomputed in one batch
        while not done:
            action = Categorical(logits=policy(mg.from_numpy(obs))).sample().item()
            states.append(obs)
            actions.append(action)
            obs, reward, done = env.step(action)
            rewards.append(reward)
    return np.stack(states), np.array(actions), rewards


def plot_returns(returns, path, target):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: skipping {path.name} ({install_hint('matplotlib')})")
        return False
    returns = np.asarray(returns)
    episodes = np.arange(1, len(returns) + 1)
    mean = [returns[max(0, i - WINDOW + 1):i + 1].mean() for i in range(len(returns))]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(episodes, returns, ".", ms=3, alpha=0.5, label="episode return")
    ax.plot(episodes, mean, "-", label=f"mean of the last {WINDOW}")
    ax.axhline(target, color="gray", ls="--", lw=1, label=f"target {target:g}")
    ax.set(xlabel="episode", ylabel="return (steps balanced)", title="REINFORCE on CartPole")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def make_parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--episodes", type=int, default=1000, help="at most this many episodes")
    p.add_argument("--target", type=float, default=475.0,
                   help=f"stop when the mean return of the last {WINDOW} episodes reaches this")
    p.add_argument("--gamma", type=float, default=0.99, help="discount factor")
    p.add_argument("--lr", type=float, default=1e-2, help="Adam's learning rate (both networks)")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("runs") / "reinforce",
                   help="folder for returns.png and checkpoint.mg")
    return p


def main(argv=None):
    args = make_parser().parse_args(argv)
    mg.manual_seed(args.seed)                           # the network weights and the actions
    env = CartPole(np.random.default_rng(args.seed))    # the initial states
    policy, value = mlp(2, args.hidden), mlp(1, args.hidden)
    policy_opt = mg.optim.Adam(policy.parameters(), lr=args.lr)
    value_opt = mg.optim.Adam(value.parameters(), lr=args.lr)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"REINFORCE with a value baseline on CartPole: up to {args.episodes} episodes, "
          f"gamma {args.gamma}, lr {args.lr:g}, seed {args.seed}")

    returns, solved_at, t0 = [], None, time.perf_counter()
    for episode in range(1, args.episodes + 1):
        states, actions, rewards = run_episode(env, policy)
        returns.append(sum(rewards))
        s = mg.from_numpy(states)                                  # (T, 4)
        g = mg.from_numpy(discounted_returns(rewards, args.gamma))  # (T,)

        # the baseline: fit V(s_t) to G_t
        v = value(s).squeeze(-1)
        value_loss = F.mse_loss(v, g)
        value_opt.zero_grad()
        value_loss.backward()
        value_opt.step()

        # the policy gradient step, with the baseline's (fixed) prediction subtracted
        advantage = g - v.detach()
        if len(advantage) > 1:
            advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        log_prob = Categorical(logits=policy(s)).log_prob(mg.from_numpy(actions))
        policy_loss = -(log_prob * advantage).sum()
        policy_opt.zero_grad()
        policy_loss.backward()
        policy_opt.step()

        mean = float(np.mean(returns[-WINDOW:]))
        if episode % 10 == 0 or episode == 1:
            print(f"episode {episode:4d}: return {returns[-1]:5.0f}   mean of the last "
                  f"{min(WINDOW, episode)} {mean:6.1f}   ({time.perf_counter() - t0:.0f} s)", flush=True)
        if episode >= WINDOW and mean >= args.target:
            solved_at = episode
            break

    elapsed = time.perf_counter() - t0
    mg.save({"policy": policy.state_dict(), "value": value.state_dict(), "returns": returns},
            args.out / "checkpoint.mg")
    if solved_at is not None:
        print(f"reached a mean return of {mean:.1f} over the last {WINDOW} episodes at episode "
              f"{solved_at} ({sum(returns):.0f} steps, {elapsed:.1f} s)")
    else:
        print(f"mean return of the last {min(WINDOW, len(returns))} episodes: {mean:.1f} after "
              f"{len(returns)} episodes, below the target {args.target:g} ({elapsed:.1f} s)")
    if plot_returns(returns, args.out / PNG, args.target):
        print(f"return curve: {args.out / PNG}")


if __name__ == "__main__":
    main()
