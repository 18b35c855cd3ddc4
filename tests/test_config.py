"""Configuration: target Python range, start methods, selection, pyproject discovery."""

from __future__ import annotations

import pytest

from dllint.config import ConfigError, Settings, find_config, load_settings, parse_requires_python, resolve_selection

CODES = ["DL000", "DL101", "DL102", "DL201", "DL301", "DL307"]
DEFAULTS = {"DL000", "DL101", "DL102", "DL201", "DL301"}


@pytest.mark.parametrize(
    "spec, expected",
    [(">=3.10", (10, None)), (">=3.9,<3.13", (9, 12)), ("~=3.11", (11, None)), ("==3.12.*", (12, 12)), (">3.10", (10, None)), ("<=3.13", (None, 13))],
)
def test_requires_python(spec, expected):
    assert parse_requires_python(spec) == expected


def test_start_methods_follow_the_target_range():
    assert Settings(target_version="py311").default_start_methods() == {"fork"}
    assert Settings(target_version="py314").default_start_methods() == {"forkserver"}
    spanning = Settings(requires_python=">=3.10")
    assert spanning.python_range() == (10, 14)
    assert spanning.default_start_methods() == {"fork", "forkserver"}
    assert Settings(requires_python=">=3.10,<3.14").default_start_methods() == {"fork"}
    assert Settings(target_version="py311", platforms=("darwin",)).default_start_methods() == {"spawn"}
    assert Settings(target_version="py312", platforms=("linux", "win32")).default_start_methods() == {"fork", "spawn"}


def test_selection_semantics():
    sel = lambda select=None, extend=(), ignore=(): resolve_selection(CODES, DEFAULTS, select, extend, ignore)
    assert sel() == DEFAULTS
    assert sel(ignore=("DL1",)) == {"DL000", "DL201", "DL301"}
    assert sel(select=("DL3",)) == {"DL301"}  # an off-by-default rule needs its exact code
    assert sel(select=("ALL",)) == set(CODES)
    assert sel(extend=("DL307",)) == DEFAULTS | {"DL307"}
    assert sel(ignore=("DL1",), extend=("DL101",)) == {"DL000", "DL101", "DL201", "DL301"}
    assert sel(select=("DL101",), ignore=("DL101",)) == set()  # a tie: ignore wins


def test_find_config_prefers_the_nearest_dllint_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nrequires-python = '>=3.10'\n[tool.dllint]\nignore = ['DL101']\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    found, nearest = find_config(str(sub))
    assert found == str(tmp_path / "pyproject.toml")
    assert nearest == str(sub / "pyproject.toml")
    settings = load_settings(found, CODES, nearest)
    assert settings.ignore == ("DL101",)
    assert settings.requires_python == ">=3.10"


def test_every_key_is_type_checked(tmp_path):
    bad = {
        "per-file-ignores": "[1]",
        "exclude": "'build'",
        "respect-gitignore": "'yes'",
        "platforms": "['beos']",
        "dataset-bases": "[1]",
        "dataloader-classes": "'x'",
    }
    for key, value in bad.items():
        path = tmp_path / "pyproject.toml"
        path.write_text(f"[tool.dllint]\n{key} = {value}\n")
        with pytest.raises(ConfigError, match=f"`{key}`"):
            load_settings(str(path), CODES)


def test_dataset_bases_and_loader_classes_are_read(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.dllint]\ndataset-bases = ['mylib.Base']\ndataloader-classes = ['mylib.Loader']\nplatforms = ['darwin']\n")
    s = load_settings(str(path), CODES)
    assert s.dataset_bases == ("mylib.Base",) and s.dataloader_classes == ("mylib.Loader",)
    assert s.platforms == ("darwin",)
