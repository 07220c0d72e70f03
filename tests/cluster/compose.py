"""Driving docker-compose.yml from a test: the Docker engine (deploy/docker-engine.sh), the
base image (deploy/debian-base-image.sh), the compose command (v2 plugin or v1), and the
addresses of the containers on the project's own network."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
ENGINE_UNAVAILABLE = 77  # deploy/docker-engine.sh: no engine can run here


class EngineUnavailable(RuntimeError):
    """No Docker engine answers and none can be started here (the reason is the message)."""


def start_engine(env: dict[str, str]) -> bool:
    """An engine answers afterwards (True: this call started it), or
    :class:`EngineUnavailable` says why not."""
    result = subprocess.run(
        [str(DEPLOY / "docker-engine.sh"), "start"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode == ENGINE_UNAVAILABLE:
        raise EngineUnavailable(result.stderr.strip().splitlines()[-1])
    if result.returncode != 0:
        raise AssertionError(f"deploy/docker-engine.sh start failed:\n{result.stderr}")
    return result.stdout.strip().endswith("started")


def stop_engine(env: dict[str, str]) -> None:
    """Stops the engine :func:`start_engine` started (one already running is left alone)."""
    subprocess.run([str(DEPLOY / "docker-engine.sh"), "stop"], env=env, timeout=120, check=True)


def base_image(env: dict[str, str]) -> str:
    """The image deploy/Dockerfile builds FROM, pulled or made with debootstrap."""
    result = subprocess.run(
        [str(DEPLOY / "debian-base-image.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, f"deploy/debian-base-image.sh failed:\n{result.stderr}"
    return result.stdout.strip().splitlines()[-1]


def compose_command() -> list[str]:
    """``docker compose`` (the v2 plugin) where present, else Debian's ``docker-compose``."""
    plugin = subprocess.run(
        ["docker", "compose", "version"], capture_output=True, text=True, check=False
    )
    if plugin.returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    raise EngineUnavailable(
        "neither `docker compose` (v2 plugin) nor `docker-compose` (apt-get install "
        "docker-compose) is installed"
    )


@dataclass
class ComposeProject:
    """One project of docker-compose.yml, named ``name``, with ``env`` for every call."""

    name: str
    env: dict[str, str]
    command: list[str] = field(default_factory=compose_command)

    def run(self, *args: str, timeout: float = 600, check: bool = True):
        result = subprocess.run(
            [*self.command, "--project-name", self.name, *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"`{' '.join(self.command)} {' '.join(args)}` exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result

    def container(self, service: str) -> str:
        ids = self.run("ps", "-q", service).stdout.split()
        assert ids, f"no container of service {service} in project {self.name}"
        return ids[0]

    def address(self, service: str) -> str:
        """The service's address on the project's network (the compose subnet)."""
        inspected = subprocess.run(
            [
                "docker",
                "inspect",
                "-f",
                "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
                self.container(service),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        addresses = inspected.stdout.split()
        assert addresses, f"{service} has no address on the project network"
        return addresses[0]

    def leftovers(self) -> dict[str, list[str]]:
        """Containers, volumes and networks still labelled with this project."""
        label = f"label=com.docker.compose.project={self.name}"
        found = {}
        for kind, listing in (
            ("containers", ["docker", "ps", "-a", "-q", "--filter", label]),
            ("volumes", ["docker", "volume", "ls", "-q", "--filter", label]),
            ("networks", ["docker", "network", "ls", "-q", "--filter", label]),
        ):
            out = subprocess.run(listing, capture_output=True, text=True, check=True).stdout
            found[kind] = out.split()
        return found


def timed(action, *args, **kwargs) -> tuple[object, float]:
    """``action(*args, **kwargs)`` and the seconds it took."""
    start = time.monotonic()
    value = action(*args, **kwargs)
    return value, time.monotonic() - start


def environment(**overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(overrides)
    return env
