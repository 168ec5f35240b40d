"""A throwaway single-node Slurm for the scale-out test: munged, slurmctld and
slurmd from Debian's packages, started as child processes (no systemd) on a
configuration written into a temporary directory, and stopped again.

Everything lives under that directory: its own munge key and socket, its own
ports, state and spool, so nothing of the machine's configuration is read or
changed and a second cluster (another test run) cannot collide with it.
Client commands and the jobs' Snakemake find it through ``SLURM_CONF``
(:meth:`Cluster.env`).

Job status without accounting: the Slurm executor plugin asks ``sacct``
(which needs slurmdbd and a database) or ``squeue --states=all``, which
slurmctld answers itself for as long as it keeps a finished job, i.e.
``MinJobAge`` seconds.  With ``AccountingStorageType=accounting_storage/none``
and a ``MinJobAge`` far longer than a test, ``squeue`` sees every job to its
end, and ``scontrol show job`` still shows each one's allocation afterwards.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
# Debian's packages: slurm-wlm pulls these (and the plugins) in
APT_PACKAGES = ("munge", "slurmctld", "slurmd", "slurm-client")
PARTITION = "devices"  # the partition profiles/device-hosts-slurm asks for
GRES = "phone"  # the generic resource the profile requests for phone jobs
MIN_JOB_AGE_S = 3600


def missing() -> list[str]:
    """The daemons and client commands not on PATH (sbin included)."""
    path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    return [c for c in (*DAEMONS, "sbatch", "srun", "squeue", "scontrol") if not shutil.which(c, path=path)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mem_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            # what slurmd reports minus a margin: a node configured with more
            # memory than slurmd finds is drained
            return int(line.split()[1]) // 1024 * 9 // 10
    raise RuntimeError("no MemTotal in /proc/meminfo")


def slurm_conf(root: Path, cpus: int, mem_mb: int, ports: tuple[int, int]) -> str:
    lines = [
        "ClusterName=hxfuse-test",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        f"AuthInfo=socket={root}/munge.socket",
        f"StateSaveLocation={root}/state",
        f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/slurmctld.pid",
        f"SlurmdPidFile={root}/slurmd.pid",
        f"SlurmctldLogFile={root}/slurmctld.log",
        f"SlurmdLogFile={root}/slurmd.log",
        # no cgroups in a container: track a job's processes by parentage and
        # bind nothing (the node's CPUs are the job's to use)
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "MpiDefault=none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU_Memory",
        # squeue answers the plugin's status queries from slurmctld's memory
        f"MinJobAge={MIN_JOB_AGE_S}",
        "ReturnToService=2",
        # schedule at once on submission and completion
        "SchedulerParameters=sched_min_interval=0",
        f"GresTypes={GRES}",
        f"NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem_mb} Gres={GRES}:1 State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes=localhost Default=YES MaxTime=INFINITE State=UP",
    ]
    return "\n".join(lines) + "\n"


class Cluster:
    """``with Cluster(tmpdir) as c:`` a running one-node cluster."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.procs: dict[str, subprocess.Popen] = {}
        self.cpus = os.cpu_count() or 1

    def env(self, base: dict | None = None) -> dict:
        env = dict(os.environ if base is None else base)
        env["SLURM_CONF"] = str(self.root / "slurm.conf")
        env["PATH"] = f"{self.root / 'bin'}:{env.get('PATH', '')}:/usr/sbin:/sbin"
        return env

    def _srun_wrapper(self) -> None:
        """The jobstep plugin starts a job's step with srun in an environment
        stripped of every SLURM_* variable (so that the batch job's
        allocation settings do not leak into the step), SLURM_CONF included:
        srun then looks for /etc/slurm/slurm.conf, which this cluster does
        not write.  An srun first on PATH puts SLURM_CONF back."""
        real = shutil.which("srun")
        if real is None:
            raise RuntimeError("srun is not installed (apt-get install slurm-client)")
        wrapper = self.root / "bin" / "srun"
        wrapper.parent.mkdir(exist_ok=True)
        wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={self.root / "slurm.conf"} exec {real} "$@"\n')
        wrapper.chmod(0o755)

    def _start(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env())

    def __enter__(self) -> "Cluster":
        r = self.root
        for d in ("state", "spool"):
            (r / d).mkdir(parents=True, exist_ok=True)
        key = r / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        (r / "slurm.conf").write_text(slurm_conf(r, self.cpus, _mem_mb(), (_free_port(), _free_port())))
        (r / "gres.conf").write_text(f"NodeName=localhost Name={GRES} Count=1\n")
        self._srun_wrapper()
        try:
            self._start(
                "munged",
                [
                    "munged",
                    "--foreground",
                    "--force",  # root, and a key file munged did not make
                    f"--key-file={key}",
                    f"--socket={r}/munge.socket",
                    f"--pid-file={r}/munged.pid",
                    f"--log-file={r}/munged.log",
                    f"--seed-file={r}/munged.seed",
                ],
            )
            self._wait(lambda: (r / "munge.socket").exists(), "munged")
            self._start("slurmctld", ["slurmctld", "-D", "-i"])
            self._wait(lambda: self.scontrol("ping").returncode == 0, "slurmctld")
            self._start("slurmd", ["slurmd", "-D", "-N", "localhost"])
            self._wait(self._node_idle, "slurmd (node idle)")
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def scontrol(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["scontrol", *args], capture_output=True, text=True, env=self.env(), timeout=30)

    def _node_idle(self) -> bool:
        out = self.scontrol("show", "node", "localhost").stdout
        return "State=IDLE" in out

    def _wait(self, ready, what: str, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode}:\n{self.logs()}")
            if ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{what} not ready after {timeout:.0f} s:\n{self.logs()}")

    def logs(self) -> str:
        parts = []
        for f in sorted(self.root.glob("*.log")) + sorted(self.root.glob("*.out")):
            parts.append(f"--- {f.name}\n" + "\n".join(f.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(parts)

    def jobs(self) -> list[dict]:
        """Every job slurmctld still holds (all of a test's: MinJobAge), as
        ``scontrol show job -o``'s fields."""
        out = self.scontrol("show", "job", "-o").stdout
        jobs = []
        for line in out.splitlines():
            if not line.startswith("JobId="):
                continue
            fields = {}
            for word in line.split():
                k, _, v = word.partition("=")
                fields[k] = v
            jobs.append(fields)
        return jobs

    def stop(self) -> None:
        # slurmd first (its jobs end with it), munged last (the others
        # authenticate through it to the end)
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.pop(name, None)
            if p is None:
                continue
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
