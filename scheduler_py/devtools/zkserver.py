"""A throwaway standalone ZooKeeper from the Storm home's jars (tests, local experiments).

Storm ships ZooKeeper inside ``$STORM_HOME/lib`` (``storm-shaded-deps``); this starts
``ZooKeeperServerMain`` the way ``deploy/cluster-up.sh`` does, on a free loopback port with
its data in a given directory, and stops it again::

    with LocalZooKeeper(tmp_dir) as zk:
        client = KazooClient(zk.hosts)

    python -m scheduler_py.devtools.zkserver /tmp/zk    # until Ctrl-C
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

MAIN_CLASS = "org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServerMain"
REPO = Path(__file__).resolve().parents[2]


def storm_home() -> Path | None:
    """``$STORM_HOME``, else ``build/storm-home`` of this checkout, if it holds Storm's lib."""
    for candidate in (os.environ.get("STORM_HOME"), REPO / "build" / "storm-home"):
        if candidate and any(Path(candidate, "lib").glob("storm-shaded-deps-*.jar")):
            return Path(candidate)
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _ruok(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"ruok")
            return sock.recv(4) == b"imok"
    except OSError:
        return False


class LocalZooKeeper:
    """A standalone ZooKeeper process; ``hosts`` is its connect string."""

    def __init__(self, directory: Path, port: int | None = None, home: Path | None = None) -> None:
        self.directory = Path(directory)
        self.port = port or free_port()
        self.home = home or storm_home()
        self.process: subprocess.Popen | None = None

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> LocalZooKeeper:
        if self.home is None:
            raise FileNotFoundError(
                "no Storm home with ZooKeeper jars (set STORM_HOME or run deploy/install-storm.sh)"
            )
        java = shutil.which("java") or str(Path(os.environ.get("JAVA_HOME", "/usr"), "bin", "java"))
        data = self.directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        config = self.directory / "zoo.cfg"
        config.write_text(
            "tickTime=2000\n"
            f"dataDir={data}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            "maxClientCnxns=0\n"
            "admin.enableServer=false\n"
            "4lw.commands.whitelist=ruok,srvr,stat\n"
        )
        log = (self.directory / "zookeeper.out").open("ab")
        self.process = subprocess.Popen(
            [
                java,
                "-Xmx128m",
                "-XX:+UseSerialGC",
                "-Dzookeeper.admin.enableServer=false",
                "-cp",
                f"{self.home / 'lib'}/*",
                MAIN_CLASS,
                str(config),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"ZooKeeper exited with {self.process.returncode}; see "
                    f"{self.directory / 'zookeeper.out'}"
                )
            if _ruok(self.port):
                return self
            time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"ZooKeeper did not answer on {self.hosts} within {timeout:.0f} s")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)

    def __enter__(self) -> LocalZooKeeper:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    directory = Path(args[0]) if args else Path("build/zookeeper")
    with LocalZooKeeper(directory, int(args[1]) if len(args) > 1 else None) as zk:
        print(f"ZooKeeper on {zk.hosts} (data in {directory}); Ctrl-C stops it", flush=True)
        stop = {signal.SIGINT, signal.SIGTERM}
        signal.pthread_sigmask(signal.SIG_BLOCK, stop)
        signal.sigwait(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
