"""A real two-node Slurm cluster on this machine, started (and stopped) by the tests themselves.

It installs nothing: it needs Debian's ``slurm-wlm`` (slurmctld, slurmd, sbatch, ...) and ``munge`` already
installed (``apt-get install -y slurm-wlm munge``), and root (slurmd runs jobs as their user and ``mknod``
makes the fake GPU devices). Two ``slurmd`` daemons on distinct ports emulate nodes ``n1`` and ``n2``; each
advertises 96 CPUs, 1 TB and 8 fake GPUs (character devices cloned from /dev/null), as docs/recipes.md describes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRED = ("slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo", "munged", "munge", "unmunge")
NODES = ("n1", "n2")


@dataclass
class SlurmCluster:
    """Handle on the running test cluster.

    Attributes:
        root: scratch directory holding its config, spool, logs and devices.
        env: environment for Slurm client commands (``SLURM_CONF`` set).
    """

    root: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 20, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a Slurm client command against this cluster."""
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=timeout, check=check)

    def job_field(self, job_id: str, field: str) -> str:
        """One ``Key=Value`` field of ``scontrol show job`` ('' when the job is gone)."""
        proc = self.run("scontrol", "-o", "show", "job", job_id, check=False)
        for token in proc.stdout.split():
            key, _, value = token.partition("=")
            if key == field:
                return value
        return ""

    def diagnostics(self, job_id: str) -> str:
        """``scontrol show job`` and the tails of the daemons' logs, for a failure message."""
        job = self.run("scontrol", "show", "job", job_id, check=False).stdout
        logs = [
            f"--- {path.name} ---\n{path.read_text(errors='replace')[-3000:]}"
            for path in sorted((self.root / "log").glob("*.log"))
        ]
        return "\n".join([f"--- scontrol show job {job_id} ---\n{job}", *logs])


def _free_ports(count: int) -> list[int]:
    sockets = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _munge_works() -> bool:
    try:
        encoded = subprocess.run(["munge", "-n"], capture_output=True, timeout=5, check=True).stdout
        return subprocess.run(["unmunge"], input=encoded, capture_output=True, timeout=5, check=False).returncode == 0
    except (subprocess.SubprocessError, OSError):
        return False


def _write_config(root: Path, ctld_port: int, node_ports: list[int]) -> None:
    host = socket.gethostname()
    lines = [
        "ClusterName=rlif-test",
        f"SlurmctldHost={host}(127.0.0.1)",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={ctld_port}",
        "AuthType=auth/munge",
        # A requeued job waits one credential lifetime before it may start again (so that the new launch credential
        # is newer than the revocation of the old one); 10 s instead of the default 120 s keeps the requeue test short.
        "AuthInfo=cred_expire=10",
        "CredType=cred/munge",
        f"StateSaveLocation={root}/spool/ctld",
        f"SlurmdSpoolDir={root}/spool/%n",
        f"SlurmctldPidFile={root}/run/slurmctld.pid",
        f"SlurmdPidFile={root}/run/slurmd-%n.pid",
        f"SlurmctldLogFile={root}/log/slurmctld.log",
        f"SlurmdLogFile={root}/log/slurmd-%n.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "MpiDefault=none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "ReturnToService=2",
        "SlurmdParameters=config_overrides",
        "GresTypes=gpu",
        "KillWait=10",
    ]
    for name, port in zip(NODES, node_ports, strict=True):
        lines.append(
            f"NodeName={name} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} CPUs=96 Boards=1 "
            "SocketsPerBoard=2 CoresPerSocket=48 ThreadsPerCore=1 RealMemory=1000000 Gres=gpu:8 State=UNKNOWN"
        )
    lines.append(f"PartitionName=gpu Nodes={','.join(NODES)} Default=YES MaxTime=UNLIMITED State=UP")
    (root / "slurm.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "gres.conf").write_text(
        f"AutoDetect=off\nNodeName={','.join(NODES)} Name=gpu File={root}/dev/nvidia[0-7]\n", encoding="utf-8"
    )
    for sub in ("spool/ctld", "run", "log", "dev", *(f"spool/{n}" for n in NODES)):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for i in range(8):
        os.mknod(root / "dev" / f"nvidia{i}", 0o666 | 0o020000, os.makedev(1, 3))


def _stop(pid_file: Path) -> None:
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text().strip())
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):  # a slurmd that lost its controller ignores SIGTERM
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    """Start munge (if not running), slurmctld and two slurmd; stop what was started at the end."""
    missing = [b for b in REQUIRED if shutil.which(b) is None and not Path("/usr/sbin", b).exists()]
    if missing:
        pytest.skip(f"Slurm not installed ({missing}); apt-get install -y slurm-wlm")
    if os.geteuid() != 0:
        pytest.skip("the local Slurm cluster needs root (slurmd, mknod)")
    started_munge = False
    if not _munge_works():
        subprocess.run(["install", "-d", "-o", "munge", "-g", "munge", "-m", "755", "/run/munge"], check=True)
        subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True)
        started_munge = True
        if not _munge_works():
            pytest.fail("munged started but munge -n | unmunge fails")
    root = Path(tempfile.mkdtemp(prefix="rlif_slurm_", dir="/tmp"))
    ctld_port, *node_ports = _free_ports(1 + len(NODES))
    _write_config(root, ctld_port, node_ports)
    env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
    cluster = SlurmCluster(root=root, env=env)
    try:
        subprocess.run(["slurmctld"], env=env, check=True, timeout=30)
        for name in NODES:
            subprocess.run(["slurmd", "-N", name], env=env, check=True, timeout=30)
        deadline = time.monotonic() + 60
        while True:
            proc = cluster.run("sinfo", "-h", "-o", "%T %D", check=False, timeout=5)
            if proc.stdout.split() == ["idle", str(len(NODES))]:
                break
            if time.monotonic() > deadline:
                logs = "\n".join(p.read_text()[-2000:] for p in (root / "log").glob("*.log"))
                pytest.fail(f"Slurm cluster not idle after 60 s: {proc.stdout!r} {proc.stderr!r}\n{logs}")
            time.sleep(0.5)
        yield cluster
    finally:
        subprocess.run(["scancel", "--full", "--user=root"], env=env, capture_output=True, timeout=10, check=False)
        for name in NODES:
            _stop(root / "run" / f"slurmd-{name}.pid")
        _stop(root / "run" / "slurmctld.pid")
        if started_munge:
            _stop(Path("/run/munge/munged.pid"))
        shutil.rmtree(root, ignore_errors=True)
