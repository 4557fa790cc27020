"""Turns the kustomize base in deploy/kubernetes into what `podman kube play` (4.3)
runs, changing only what podman lacks, each change named here:

* a StatefulSet becomes one Pod per replica (desk-0, desk-1, ...) with the
  PersistentVolumeClaim its volumeClaimTemplate would make (journal-desk-0, ...):
  podman plays Pods, Deployments and claims only;
* `$(VAR)` references in env values are expanded (podman passes them verbatim) with
  the pod's name and the namespace `default`;
* an env var from `status.podIP` is dropped, with the addresses that referenced it
  (podman 4.3 cannot fill it in);
* each emptyDir is renamed after its pod (tmp-desk-0, ...): podman 4.3 makes an
  emptyDir a named volume, which pods would otherwise share;
* container ports are dropped: podman 4.3 publishes a containerPort on the host's same
  port, where three desks collide (a pod's ports need no publishing: the test reaches
  each pod at its own address);
* the image is the one given; Service and NetworkPolicy are left out (podman ignores
  them; the suite validates them against the schemas instead);
* a Deployment becomes one Pod named after it (podman would add a suffix), its
  `$(VAR)` arguments expanded as Kubernetes would, an `--allow-host` of the pod's IP
  dropped;
* the operator plane's `--discover SERVICE...:PORT` becomes one `--desk
  http://desk-N:PORT` per desk of the StatefulSet behind that Service, and each desk
  also answers to its bare pod name: podman's DNS knows pods by name only, and has no
  Service records;
* `--policy FILE` puts FILE in place of the policy ConfigMap's `config.json`, as an
  overlay would;
* `--unready N` adds N desks (after the last replica) whose screen setting Xvfb
  refuses: desks that never become healthy.

Usage: podman_play.py KUSTOMIZATION_DIR IMAGE [--policy FILE] [--unready N] > play.json
Prints JSON (YAML 1.2 reads it) with one document per line: {"kind": ...}.
"""

import copy
import json
import os
import re
import sys

import yaml

NAMESPACE = "default"


def resources(base):
    with open(os.path.join(base, "kustomization.yaml")) as f:
        k = yaml.safe_load(f)
    extra = set(k) - {"apiVersion", "kind", "resources"}
    if extra:
        sys.exit(f"the base uses {sorted(extra)}: render it with kustomize before playing")
    for name in k["resources"]:
        with open(os.path.join(base, name)) as f:
            yield from (d for d in yaml.safe_load_all(f) if d)


def expand(value, env):
    def sub(m):
        if m.group(1) not in env:
            sys.exit(f"no value for $({m.group(1)}) in {value!r}")
        return env[m.group(1)]

    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", sub, value)


def pod_env(container, pod_name):
    known = {"POD_NAME": pod_name, "POD_NAMESPACE": NAMESPACE}
    out = []
    dropped = set()
    for e in container.get("env", []):
        path = e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if path == "status.podIP":
            dropped.add(e["name"])
            continue
        if path == "metadata.name":
            out.append({"name": e["name"], "value": pod_name})
            continue
        if path == "metadata.namespace":
            out.append({"name": e["name"], "value": NAMESPACE})
            continue
        if "value" in e:
            v = e["value"]
            for d in dropped:
                v = ",".join(p for p in v.split(",") if f"$({d})" not in p)
            if e["name"] == "COMPUTER_CONTROL_ALLOW_HOSTS":
                v = "$(POD_NAME)," + v
            e = {"name": e["name"], "value": expand(v, known)}
        out.append(e)
    return out


def desk_pods(r, image, unready):
    """The StatefulSet's pods and claims, `unready` broken desks after its replicas."""
    docs = []
    name = r["metadata"]["name"]
    replicas = r["spec"]["replicas"]
    for i in range(replicas + unready):
        pod_name = f"{name}-{i}"
        tpl = copy.deepcopy(r["spec"]["template"])
        spec = tpl["spec"]
        spec["hostname"] = pod_name
        private = {v["name"] for v in spec.get("volumes", []) if "emptyDir" in v}
        for v in spec.get("volumes", []):
            if v["name"] in private:
                v["name"] = f'{v["name"]}-{pod_name}'
        for c in spec["containers"]:
            for m in c.get("volumeMounts", []):
                if m["name"] in private:
                    m["name"] = f'{m["name"]}-{pod_name}'
            c["image"] = image
            c.pop("ports", None)
            c["env"] = pod_env(c, pod_name)
            if i >= replicas:
                c["env"] = [e for e in c["env"] if e["name"] != "DESK_SCREEN"]
                c["env"].append({"name": "DESK_SCREEN", "value": "0x0x0"})
        for vct in r["spec"].get("volumeClaimTemplates", []):
            claim = f'{vct["metadata"]["name"]}-{pod_name}'
            docs.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": claim, "labels": vct["metadata"].get("labels", {})},
                    "spec": vct["spec"],
                }
            )
            spec.setdefault("volumes", []).append(
                {"name": vct["metadata"]["name"], "persistentVolumeClaim": {"claimName": claim}}
            )
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": pod_name, "labels": tpl["metadata"]["labels"]},
                "spec": spec,
            }
        )
    return docs


def plane_args(args, env, desks_of):
    """A Deployment's arguments as podman should run them (see the module's notes)."""
    out = []
    it = iter(args)
    for a in it:
        if a == "--allow-host":
            v = next(it)
            if "$(POD_IP)" not in v:
                out += [a, expand(v, env)]
        elif a == "--discover":
            name, port = expand(next(it), env).rsplit(":", 1)
            service = name.split(".")[0]
            if service not in desks_of:
                sys.exit(f"--discover {name}: no StatefulSet serves {service}")
            for pod in desks_of[service]:
                out += ["--desk", f"http://{pod}:{port}"]
        else:
            out.append(expand(a, env))
    return out


def play(base, image, policy=None, unready=0):
    docs = []
    desks_of = {}
    items = list(resources(base))
    for r in items:
        if r["kind"] == "StatefulSet":
            pods = desk_pods(r, image, unready)
            desks_of[r["spec"]["serviceName"]] = [
                d["metadata"]["name"] for d in pods if d["kind"] == "Pod"
            ]
            docs += pods
        elif r["kind"] == "ConfigMap":
            r = copy.deepcopy(r)
            if policy is not None and "config.json" in r.get("data", {}):
                with open(policy) as f:
                    r["data"]["config.json"] = f.read()
            docs.insert(0, r)
    for r in items:
        if r["kind"] != "Deployment":
            continue
        pod_name = r["metadata"]["name"]
        tpl = copy.deepcopy(r["spec"]["template"])
        spec = tpl["spec"]
        spec["hostname"] = pod_name
        for c in spec["containers"]:
            c["image"] = image
            c.pop("ports", None)
            c["env"] = pod_env(c, pod_name)
            env = {"POD_NAME": pod_name, "POD_NAMESPACE": NAMESPACE}
            c["args"] = plane_args(c.get("args", []), env, desks_of)
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": pod_name, "labels": tpl["metadata"]["labels"]},
                "spec": spec,
            }
        )
    return docs


if __name__ == "__main__":
    argv = sys.argv[1:]
    opts = {"--policy": None, "--unready": "0"}
    while len(argv) > 2 and argv[-2] in opts:
        opts[argv[-2]] = argv[-1]
        argv = argv[:-2]
    if len(argv) != 2:
        sys.exit(__doc__)
    docs = play(argv[0], argv[1], opts["--policy"], int(opts["--unready"]))
    print("\n---\n".join(json.dumps(d) for d in docs))
