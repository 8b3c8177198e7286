"""The package's layering rules, read from the manifest itself (`swift package dump-package`), so a
dependency added later cannot break them silently:

- `Contracts` (the bus's message types) depends on no C library: its targets, followed through
  every dependency, include no system-library target (libzmq, libpq) and no other package's
  product (which could bring one). It depends on `BusCore`, the bus without its transport.
- `compass` (the operator CLI) depends on no benchmark: what both need (`LoadKit`) lives in
  `Shared/`.

Run by deploy/test with the other Tests/Deploy checks; needs only the Swift toolchain.
"""
import functools
import json
import pathlib
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


@functools.cache
def manifest():
    # A scratch path of its own: the manifest is all that is read, and a build running in the
    # worktree's .build must not block (or be blocked by) this check.
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(
            ["swift", "package", "--scratch-path", scratch, "dump-package"],
            cwd=ROOT, capture_output=True, text=True, timeout=600, check=True,
        ).stdout
    return json.loads(out)


def targets():
    return {target["name"]: target for target in manifest()["targets"]}


def direct_dependencies(target):
    """(kind, name) of each dependency: ("target", name) for this package's, ("product", "package/name") for another's."""
    names = targets()
    for dependency in target.get("dependencies", []):
        (kind, value), = dependency.items()
        if kind in ("byName", "target"):
            name = value[0]
            yield ("target", name) if name in names else ("product", name)
        elif kind == "product":
            yield ("product", f"{value[1]}/{value[0]}")


def closure(name):
    """Every dependency of target `name`, followed through this package's targets."""
    names = targets()
    seen, todo = set(), [("target", name)]
    while todo:
        kind, current = todo.pop()
        for dependency in direct_dependencies(names[current]):
            if dependency not in seen:
                seen.add(dependency)
                if dependency[0] == "target":
                    todo.append(dependency)
    return seen


def system_libraries(name):
    names = targets()
    return sorted(dep for kind, dep in closure(name) if kind == "target" and names[dep]["type"] == "system")


def test_the_check_sees_a_c_library_where_there_is_one():
    # Bus is the transport: it must show libzmq, or the checks below would prove nothing.
    assert "CZeroMQ" in system_libraries("Bus")
    assert "CLibPQ" in system_libraries("ServiceKit")


def test_contracts_depends_on_no_c_library():
    assert system_libraries("Contracts") == []
    products = sorted(dep for kind, dep in closure("Contracts") if kind == "product")
    assert products == [], f"Contracts (types only) reaches other packages' products: {products}"
    assert ("target", "BusCore") in closure("Contracts")
    assert ("target", "Bus") not in closure("Contracts")


def test_bus_core_is_free_of_the_transport():
    assert system_libraries("BusCore") == []
    assert ("target", "Bus") not in closure("BusCore")


def test_compass_depends_on_no_benchmark():
    names = targets()
    benchmarks = {name for name, target in names.items() if (target.get("path") or "").startswith("Benchmarks/")}
    assert benchmarks, "no target under Benchmarks/: the check would prove nothing"
    reached = sorted(dep for kind, dep in closure("compass") if kind == "target" and dep in benchmarks)
    assert reached == [], f"compass depends on benchmark targets {reached}; move what both need to Shared/"
