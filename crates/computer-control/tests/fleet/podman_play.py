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
  them; the suite validates them against the schemas instead).

Usage: podman_play.py KUSTOMIZATION_DIR IMAGE > play.json
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
            e = {"name": e["name"], "value": expand(v, known)}
        out.append(e)
    return out


def play(base, image):
    docs = []
    for r in resources(base):
        if r["kind"] != "StatefulSet":
            continue
        name = r["metadata"]["name"]
        for i in range(r["spec"]["replicas"]):
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


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    docs = play(sys.argv[1], sys.argv[2])
    print("\n---\n".join(json.dumps(d) for d in docs))
