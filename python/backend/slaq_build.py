"""slaq_build: the build backend of the slaq Python client.

A PEP 517 backend that needs nothing but the standard library, so that
`pip install ./python` works on a machine with no package index: with
`requires = []` pip has nothing to download before it calls these hooks.
The client is pure Python, so a wheel is a zip of python/slaq/ with the
metadata pip expects (PEP 427: METADATA, WHEEL, RECORD); an sdist is a
tar.gz of this directory. The metadata comes from pyproject.toml's
[project] table, the one place it is written.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "slaq"
# A fixed timestamp for every archive entry, so that the same sources give
# the same bytes (zip cannot store times before 1980).
EPOCH = (1980, 1, 1, 0, 0, 0)


def _project():
    """pyproject.toml's [project] table: name, version, description,
    requires-python, license text. tomllib (Python 3.11) where there is
    one; before it, the table's simple `key = "value"` lines, which is all
    this file uses."""
    path = os.path.join(HERE, "pyproject.toml")
    try:
        import tomllib
    except ImportError:
        tomllib = None
    if tomllib is not None:
        with open(path, "rb") as f:
            proj = tomllib.load(f)["project"]
        lic = proj.get("license", {})
        proj["license"] = lic.get("text", "") if isinstance(lic, dict) else lic
        return proj
    proj, table = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            head = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
            if head:
                table = head.group(1).strip()
                continue
            if table != "project":
                continue
            kv = re.match(r'^\s*([\w-]+)\s*=\s*"([^"]*)"', line)
            if kv:
                proj[kv.group(1)] = kv.group(2)
            lic = re.match(r'^\s*license\s*=\s*\{\s*text\s*=\s*"([^"]*)"', line)
            if lic:
                proj["license"] = lic.group(1)
    if "name" not in proj or "version" not in proj:
        raise RuntimeError("%s: [project] needs name and version" % path)
    return proj


def _metadata(proj):
    lines = ["Metadata-Version: 2.1",
             "Name: " + proj["name"],
             "Version: " + proj["version"]]
    if proj.get("description"):
        lines.append("Summary: " + proj["description"])
    if proj.get("requires-python"):
        lines.append("Requires-Python: " + proj["requires-python"])
    if proj.get("license"):
        lines.append("License: " + proj["license"])
    readme = os.path.join(HERE, proj.get("readme") or "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _dist_name(proj):
    return re.sub(r"[-_.]+", "_", proj["name"]) + "-" + proj["version"]


def _sources():
    """(path in the archive, path on disk) of every module of the
    package, sorted, without caches."""
    out = []
    root = os.path.join(HERE, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                out.append((os.path.relpath(full, HERE).replace(os.sep, "/"),
                            full))
    if not out:
        raise RuntimeError("%s: no Python modules found" % root)
    return out


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return "%s,sha256=%s,%d" % (name, digest.rstrip(b"=").decode(), len(data))


def _write_wheel(directory, extra=()):
    """Writes the wheel into `directory` and returns its file name.
    `extra` adds (archive name, bytes) entries (the editable .pth)."""
    proj = _project()
    dist = _dist_name(proj)
    info = dist + ".dist-info"
    wheel_name = dist + "-py3-none-any.whl"
    files = []
    if not extra:
        for arc, full in _sources():
            with open(full, "rb") as f:
                files.append((arc, f.read()))
    files.extend(extra)
    files.append((info + "/METADATA", _metadata(proj).encode()))
    files.append((info + "/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: slaq_build\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n").encode()))
    files.append((info + "/top_level.txt", (PACKAGE + "\n").encode()))
    record = [_record_line(n, d) for n, d in files]
    record.append(info + "/RECORD,,")
    files.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    path = os.path.join(directory, wheel_name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            entry = zipfile.ZipInfo(name, EPOCH)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return wheel_name


# PEP 517 hooks.

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return _write_wheel(wheel_directory)


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    # PEP 660: a wheel whose .pth file puts this directory on sys.path.
    pth = ("__editable__.%s.pth" % _dist_name(_project()), (HERE + "\n").encode())
    return _write_wheel(wheel_directory, extra=(pth,))


def build_sdist(sdist_directory, config_settings=None):
    proj = _project()
    base = re.sub(r"[-_.]+", "_", proj["name"]) + "-" + proj["version"]
    name = base + ".tar.gz"
    members = ["pyproject.toml", "README.md", "backend/slaq_build.py"]
    members += [arc for arc, _ in _sources()]
    pkg_info = _metadata(proj).encode()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for arc in members:
            full = os.path.join(HERE, arc)
            if not os.path.exists(full):
                continue
            entry = t.gettarinfo(full, base + "/" + arc)
            entry.mtime, entry.uid, entry.gid = 0, 0, 0
            entry.uname = entry.gname = ""
            with open(full, "rb") as f:
                t.addfile(entry, f)
        entry = tarfile.TarInfo(base + "/PKG-INFO")
        entry.size = len(pkg_info)
        t.addfile(entry, io.BytesIO(pkg_info))
    return name
