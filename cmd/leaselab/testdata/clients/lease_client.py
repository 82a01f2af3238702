"""Drives leaselab with the official Kubernetes Python client, as a workshop participant would.

Run by TestPythonClient (outside_clients_test.go) with KUBECONFIG naming a participant's
kubeconfig (HTTPS, the server's CA, a bearer token), NAMESPACE the participant's namespace and
OTHER_NAMESPACE one it may not write. It prints one JSON object of what each step saw; the Go
test checks it and reads back with client-go what this script left.
"""

import datetime
import json
import os
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

ns = os.environ["NAMESPACE"]
other = os.environ["OTHER_NAMESPACE"]
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
api = client.CoordinationV1Api()
out = {}


def now():
    # MicroTime fields travel with microseconds (RFC 3339, six digits), as the real server
    # wants them; a whole second would be sent without any and refused by both.
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.replace(microsecond=t.microsecond or 1)


def status(e):
    body = json.loads(e.body) if e.body else {}
    return {"code": e.status, "reason": body.get("reason"), "kind": body.get("kind")}


def lease(name, holder, when):
    return client.V1Lease(
        metadata=client.V1ObjectMeta(name=name, labels={"client": "python"}),
        spec=client.V1LeaseSpec(holder_identity=holder, lease_duration_seconds=15,
                                acquire_time=when, renew_time=when, lease_transitions=0))


t0 = now()
created = api.create_namespaced_lease(ns, lease("python-lease", "py-a", t0))
out["created"] = {"rv": created.metadata.resource_version, "uid": created.metadata.uid,
                  "holder": created.spec.holder_identity,
                  "renewTime": created.spec.renew_time.isoformat(), "sent": t0.isoformat()}

got = api.read_namespaced_lease("python-lease", ns)
got.spec.renew_time = now()
replaced = api.replace_namespaced_lease("python-lease", ns, got)
out["replaced"] = {"rv": replaced.metadata.resource_version}

stale = api.read_namespaced_lease("python-lease", ns)
stale.metadata.resource_version = created.metadata.resource_version
try:
    api.replace_namespaced_lease("python-lease", ns, stale)
    out["stale"] = {"code": 200}
except ApiException as e:
    out["stale"] = status(e)

# A dict body is sent as a strategic merge patch, a list as a JSON patch.
patched = api.patch_namespaced_lease("python-lease", ns,
                                     {"spec": {"holderIdentity": "py-b", "leaseTransitions": 1}})
out["patched"] = {"rv": patched.metadata.resource_version, "holder": patched.spec.holder_identity,
                  "transitions": patched.spec.lease_transitions}
jp = api.patch_namespaced_lease("python-lease", ns,
                                [{"op": "replace", "path": "/spec/leaseDurationSeconds", "value": 20}])
out["jsonPatched"] = {"rv": jp.metadata.resource_version, "duration": jp.spec.lease_duration_seconds}

listed = api.list_namespaced_lease(ns, label_selector="client=python")
out["listed"] = {"names": sorted(i.metadata.name for i in listed.items),
                 "rv": listed.metadata.resource_version}

# Every change since the creation, in order, from a watch started at its resourceVersion.
events = []
w = watch.Watch()
for ev in w.stream(api.list_namespaced_lease, ns, resource_version=created.metadata.resource_version,
                   timeout_seconds=20):
    o = ev["object"]
    events.append({"type": ev["type"], "rv": o.metadata.resource_version,
                   "holder": o.spec.holder_identity})
    if len(events) == 3:
        w.stop()
out["watched"] = events

try:
    api.create_namespaced_lease(other, lease("python-lease", "py-a", now()))
    out["otherNamespace"] = {"code": 201}
except ApiException as e:
    out["otherNamespace"] = status(e)

kept_at = now()
api.create_namespaced_lease(ns, lease("python-kept", "py-kept", kept_at))
out["kept"] = {"renewTime": kept_at.isoformat()}

api.delete_namespaced_lease("python-lease", ns)
try:
    api.read_namespaced_lease("python-lease", ns)
    out["afterDelete"] = {"code": 200}
except ApiException as e:
    out["afterDelete"] = status(e)

json.dump(out, sys.stdout)
