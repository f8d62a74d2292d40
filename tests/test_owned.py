"""A command writes only where it owns: never a published bundle as a data folder, never the
system's folders or the home folder itself (issue 33, item 10)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.command import tablebase


@pytest.mark.parametrize("command", [["build", "sticks:rows=1"], ["enumerate", "sticks:rows=1"], ["export"]])
def test_a_bundle_is_never_written_as_a_data_folder(tmp_path, command):
    bundle = tmp_path / "tablebase-0.19.0"
    bundle.mkdir()
    (bundle / "DATASET.md").write_text("a published bundle\n")
    (bundle / "SHA256SUMS").write_text("")
    before = sorted(path.name for path in bundle.rglob("*"))
    result = tablebase(*command, "-q", "--data", str(bundle))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {bundle} is a published bundle") and "--data data" in line, line
    assert sorted(path.name for path in bundle.rglob("*")) == before


@pytest.mark.parametrize("folder", ["/", "/etc", "/usr"])
def test_the_systems_folders_are_never_a_data_folder(folder):
    before = Path(folder, "catalog.parquet").exists()
    result = tablebase("build", "sticks:rows=1", "-q", "--data", folder)
    assert result.returncode == 1
    assert "a folder of the system" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert Path(folder, "catalog.parquet").exists() == before
    assert not Path(folder, ".locks").exists() or before


def test_the_home_folder_itself_is_never_a_data_folder(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    result = tablebase("build", "sticks:rows=1", "-q", "--data", str(home))
    assert result.returncode == 1 and "your home folder" in result.stderr
    assert list(home.iterdir()) == []


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("owned") / "data"
    assert tablebase("build", "chopsticks", "-q", "--data", str(data)).returncode == 0
    return data


@pytest.mark.parametrize("inside", [".", "chopsticks", "chopsticks/default", "pages/.."])
def test_draw_writes_pages_into_the_data_folder_only_under_pages(built, tmp_path, inside):
    data = tmp_path / "data"
    subprocess.run(["cp", "-a", str(built), str(data)], check=True)
    result = tablebase("draw", "chopsticks", "-q", "--data", str(data), "--out", str(data / inside))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "is inside the data folder" in line and "pages" in line, line
    from pipeline.datadir.check import check

    assert check(data) == []
    assert tablebase("draw", "chopsticks", "-q", "--data", str(data), "--out", str(data / "pages")).returncode == 0


def test_publish_never_writes_into_a_bundle_nor_moves_aside_what_is_in_its_way(built, tmp_path):
    from pipeline import __version__

    dist = tmp_path / "dist"
    assert tablebase("publish", "-q", "--out", str(dist), "--data", str(built)).returncode == 0
    bundle = dist / f"tablebase-{__version__}"
    sums = (bundle / "SHA256SUMS").read_bytes()
    for out in (bundle, bundle / "tablebase"):  # the bundle itself, a folder in it
        result = tablebase("publish", "-q", "--out", str(out), "--data", str(built))
        assert result.returncode == 1 and "is inside the published bundle" in result.stderr, result.stderr
    assert (bundle / "SHA256SUMS").read_bytes() == sums and not (bundle / bundle.name).exists()
    # someone's file named like the bundle: left where it is, publish refuses
    other = tmp_path / "other"
    other.mkdir()
    (other / bundle.name).write_text("mine\n")
    result = tablebase("publish", "-q", "--out", str(other), "--data", str(built))
    assert result.returncode == 1 and "is in the way" in result.stderr, result.stderr
    assert (other / bundle.name).read_text() == "mine\n" and sorted(p.name for p in other.iterdir()) == [bundle.name]
