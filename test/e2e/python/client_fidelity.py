"""
The official Python client (Debian's python3-kubernetes, unmodified) against the mk8s cluster:
each check prints one JSON line {"check": name, "ok": bool, "detail": ...}; the exit code is the
number of failed checks. Driven by test/e2e/python-client.e2e.test.ts, which creates the
namespace and the pods `logger` (busybox printing a line a second) and `web` (the test server on
8080) beforehand.

Usage: /usr/bin/python3 client_fidelity.py KUBECONFIG NAMESPACE
"""
import json
import re
import sys
import time
import traceback

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import portforward, stream

KUBECONFIG, NS = sys.argv[1], sys.argv[2]
config.load_kube_config(config_file=KUBECONFIG)
core = client.CoreV1Api()
apps = client.AppsV1Api()
failures = 0


def check(name):
    def wrap(fn):
        global failures
        try:
            detail = fn()
            print(json.dumps({"check": name, "ok": True, "detail": detail}), flush=True)
        except Exception as e:  # one check failing must not hide the others
            failures += 1
            print(json.dumps({"check": name, "ok": False, "detail": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()}), flush=True)
        return fn
    return wrap


def cm(name, data, labels=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data)


def wait_for(cond, what, timeout=90):
    deadline = time.time() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.5)


@check("watch with resume")
def _():
    rv = core.list_namespaced_config_map(NS).metadata.resource_version
    core.create_namespaced_config_map(NS, cm("watched", {"v": "1"}))
    w = watch.Watch()
    seen = []
    # watch=True is what the client sends: a plain list here would end the stream at once.
    for ev in w.stream(core.list_namespaced_config_map, NS, resource_version=rv, timeout_seconds=30):
        seen.append((ev["type"], ev["object"].metadata.name))
        if ev["object"].metadata.name == "watched":
            rv = ev["object"].metadata.resource_version
            w.stop()
    assert ("ADDED", "watched") in seen, seen
    core.patch_namespaced_config_map("watched", NS, {"data": {"v": "2"}})
    w2 = watch.Watch()
    for ev in w2.stream(core.list_namespaced_config_map, NS, resource_version=rv, timeout_seconds=30):
        assert ev["type"] == "MODIFIED" and ev["object"].data["v"] == "2", (ev["type"], ev["object"].data)
        w2.stop()
        return "resumed from %s: MODIFIED" % rv
    raise AssertionError("no event after resume")


@check("logs follow with timestamps")
def _():
    resp = core.read_namespaced_pod_log("logger", NS, follow=True, timestamps=True, _preload_content=False)
    lines = []
    buf = b""
    for chunk in resp.stream(64):
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line.decode())
        if len(lines) >= 3:
            break
    resp.release_conn()
    for l in lines:
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z line \d+$", l), l
    return lines[:3]


@check("exec with stdin, stderr and exit code")
def _():
    ws = stream(core.connect_get_namespaced_pod_exec, "logger", NS,
                command=["sh", "-c", "read x; echo got-$x; echo oops >&2; exit 3"],
                stdin=True, stdout=True, stderr=True, tty=False, _preload_content=False)
    ws.write_stdin("hello\n")
    out, err = "", ""
    deadline = time.time() + 60
    while ws.is_open() and time.time() < deadline:
        ws.update(timeout=1)
        out += ws.read_stdout() if ws.peek_stdout() else ""
        err += ws.read_stderr() if ws.peek_stderr() else ""
    out += ws.read_stdout() if ws.peek_stdout() else ""
    err += ws.read_stderr() if ws.peek_stderr() else ""
    code = ws.returncode
    ws.close()
    assert out.strip() == "got-hello", repr(out)
    assert err.strip() == "oops", repr(err)
    assert code == 3, code
    return {"stdout": out.strip(), "stderr": err.strip(), "exit": code}


@check("port-forward")
def _():
    pf = portforward(core.connect_get_namespaced_pod_portforward, "web", NS, ports="8080")
    sock = pf.socket(8080)
    sock.setblocking(True)
    sock.sendall(b"GET /echo?msg=through-the-tunnel HTTP/1.1\r\nHost: web\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    sock.close()
    err = pf.error(8080)
    assert err is None, err
    assert data.startswith(b"HTTP/1.1 200"), data[:200]
    # The test server answers chunked: the message is inside the body.
    assert b"\r\nthrough-the-tunnel\r\n" in data, data[-200:]
    return data.split(b"\r\n", 1)[0].decode()


@check("forced server-side apply")
def _():
    dyn = dynamic.DynamicClient(client.ApiClient())
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    body = lambda v: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "namespace": NS}, "data": {"owner": v}}
    # This client version sends an apply patch only as a string body (it serializes dicts for JSON types only).
    body_of = body
    body = lambda v: json.dumps(body_of(v))
    cms.server_side_apply(body=body("a"), name="applied", namespace=NS, field_manager="py-a")
    try:
        cms.server_side_apply(body=body("b"), name="applied", namespace=NS, field_manager="py-b", force_conflicts=False)
        raise AssertionError("a conflicting apply succeeded")
    except dynamic.exceptions.ConflictError as e:
        status = json.loads(e.body)
        # By reason and cause, never by message text.
        assert status["reason"] == "Conflict" and status["details"]["causes"][0]["field"] == ".data.owner", status
    # force=True on the wire (Python's spelling of the boolean).
    out = cms.server_side_apply(body=body("b"), name="applied", namespace=NS, field_manager="py-b", force_conflicts=True)
    assert out.data.owner == "b", out.data
    managers = sorted((m.manager, m.operation) for m in out.metadata.managedFields)
    assert ("py-b", "Apply") in managers, managers
    return managers


@check("paging")
def _():
    for i in range(5):
        core.create_namespaced_config_map(NS, cm("page-%d" % i, {"i": str(i)}, labels={"paged": "yes"}))
    names, cont, pages = [], None, 0
    while True:
        kw = {"label_selector": "paged=yes", "limit": 2}
        if cont:
            kw["_continue"] = cont
        page = core.list_namespaced_config_map(NS, **kw)
        pages += 1
        assert len(page.items) <= 2, len(page.items)
        names += [c.metadata.name for c in page.items]
        cont = page.metadata._continue
        if not cont:
            break
    assert sorted(names) == ["page-%d" % i for i in range(5)], names
    assert pages == 3, pages
    return {"pages": pages, "items": len(names)}


@check("delete propagation")
def _():
    def deployment(name):
        labels = {"app": name}
        return client.V1Deployment(
            metadata=client.V1ObjectMeta(name=name),
            spec=client.V1DeploymentSpec(
                replicas=0,
                selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="mk8s/busybox:1.36")]))))
    rs_of = lambda name: apps.list_namespaced_replica_set(NS, label_selector="app=" + name).items
    gone = lambda name: not [d for d in apps.list_namespaced_deployment(NS).items if d.metadata.name == name]
    # Orphan (in a DeleteOptions body): the ReplicaSet stays, without its owner.
    apps.create_namespaced_deployment(NS, deployment("orphan"))
    wait_for(lambda: rs_of("orphan"), "the ReplicaSet of orphan")
    apps.delete_namespaced_deployment("orphan", NS, body=client.V1DeleteOptions(propagation_policy="Orphan"))
    wait_for(lambda: gone("orphan"), "Deployment orphan gone")
    left = wait_for(lambda: [r for r in rs_of("orphan") if not r.metadata.owner_references], "the orphaned ReplicaSet")
    # Foreground (a query parameter): the owner goes after its dependents.
    apps.create_namespaced_deployment(NS, deployment("fg"))
    wait_for(lambda: rs_of("fg"), "the ReplicaSet of fg")
    apps.delete_namespaced_deployment("fg", NS, propagation_policy="Foreground")
    wait_for(lambda: not rs_of("fg"), "the ReplicaSet of fg deleted")
    wait_for(lambda: gone("fg"), "Deployment fg deleted")
    return {"orphaned": left[0].metadata.name}


sys.exit(failures)
