// Drives leaselab with the official Kubernetes JavaScript client (@kubernetes/client-node), as a
// workshop participant's Node.js program would.
//
// Run by TestJavaScriptClient (outside_clients_test.go) with KUBECONFIG naming a participant's
// kubeconfig (HTTPS, the server's CA, a bearer token), NAMESPACE the participant's namespace and
// OTHER_NAMESPACE one it may not write. It prints one JSON object of what each step saw; the Go
// test checks it and reads back with client-go what this script left.
import * as k8s from '@kubernetes/client-node';

const ns = process.env.NAMESPACE;
const other = process.env.OTHER_NAMESPACE;
const kc = new k8s.KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG);
const api = kc.makeApiClient(k8s.CoordinationV1Api);
const candidates = kc.makeApiClient(k8s.CoordinationV1beta1Api);
const out = {};

// MicroTime fields: the client writes a Date's milliseconds as six digits.
const now = () => new k8s.V1MicroTime();

const status = (e) => {
  let body = e.body;
  if (typeof body === 'string') {
    try { body = JSON.parse(body); } catch { body = {}; }
  }
  return { code: e.code, reason: body?.reason, kind: body?.kind };
};

const attempt = async (f) => {
  try {
    await f();
    return { code: 200 };
  } catch (e) {
    if (!(e instanceof k8s.ApiException)) throw e;
    return status(e);
  }
};

const lease = (name, holder, when) => ({
  metadata: { name, labels: { client: 'javascript' } },
  spec: { holderIdentity: holder, leaseDurationSeconds: 15, acquireTime: when, renewTime: when, leaseTransitions: 0 },
});

const t0 = now();
const created = await api.createNamespacedLease({ namespace: ns, body: lease('javascript-lease', 'js-a', t0) });
out.created = {
  rv: created.metadata.resourceVersion, uid: created.metadata.uid, holder: created.spec.holderIdentity,
  renewTime: new k8s.V1MicroTime(created.spec.renewTime).toISOString(), sent: t0.toISOString(),
};

const got = await api.readNamespacedLease({ name: 'javascript-lease', namespace: ns });
got.spec.renewTime = now();
const replaced = await api.replaceNamespacedLease({ name: 'javascript-lease', namespace: ns, body: got });
out.replaced = { rv: replaced.metadata.resourceVersion };

const stale = await api.readNamespacedLease({ name: 'javascript-lease', namespace: ns });
stale.metadata.resourceVersion = created.metadata.resourceVersion;
out.stale = await attempt(() => api.replaceNamespacedLease({ name: 'javascript-lease', namespace: ns, body: stale }));

const patched = await api.patchNamespacedLease(
  { name: 'javascript-lease', namespace: ns, body: { spec: { holderIdentity: 'js-b', leaseTransitions: 1 } } },
  k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
out.patched = { rv: patched.metadata.resourceVersion, holder: patched.spec.holderIdentity, transitions: patched.spec.leaseTransitions };
// The client's default patch is a JSON patch.
const jp = await api.patchNamespacedLease({
  name: 'javascript-lease', namespace: ns,
  body: [{ op: 'replace', path: '/spec/leaseDurationSeconds', value: 20 }],
});
out.jsonPatched = { rv: jp.metadata.resourceVersion, duration: jp.spec.leaseDurationSeconds };

const listed = await api.listNamespacedLease({ namespace: ns, labelSelector: 'client=javascript' });
out.listed = { names: listed.items.map((i) => i.metadata.name).sort(), rv: listed.metadata.resourceVersion };

// Every change since the creation, in order, from a watch started at its resourceVersion.
out.watched = await new Promise((resolve, reject) => {
  const events = [];
  let abort;
  const timer = setTimeout(() => { abort?.abort(); resolve(events); }, 20000);
  new k8s.Watch(kc).watch(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
    { resourceVersion: created.metadata.resourceVersion, allowWatchBookmarks: false },
    (type, obj) => {
      events.push({ type, rv: obj.metadata.resourceVersion, holder: obj.spec.holderIdentity });
      if (events.length === 3) { clearTimeout(timer); abort?.abort(); resolve(events); }
    },
    (err) => { if (err && err.name !== 'AbortError') { clearTimeout(timer); reject(err); } },
  ).then((a) => { abort = a; }, reject);
});

out.otherNamespace = await attempt(() => api.createNamespacedLease({ namespace: other, body: lease('javascript-lease', 'js-a', now()) }));

const keptAt = now();
await api.createNamespacedLease({ namespace: ns, body: lease('javascript-kept', 'js-kept', keptAt) });
out.kept = { renewTime: keptAt.toISOString() };

// A LeaseCandidate of Coordinated Leader Election, through the client's v1beta1 API.
const cand = await candidates.createNamespacedLeaseCandidate({
  namespace: ns,
  body: {
    metadata: { name: 'javascript-candidate' },
    spec: { leaseName: 'javascript-kept', binaryVersion: '1.36.0', emulationVersion: '1.36.0',
      strategy: 'OldestEmulationVersion', renewTime: now() },
  },
});
out.candidate = { rv: cand.metadata.resourceVersion, lease: cand.spec.leaseName };

await api.deleteNamespacedLease({ name: 'javascript-lease', namespace: ns });
out.afterDelete = await attempt(() => api.readNamespacedLease({ name: 'javascript-lease', namespace: ns }));

process.stdout.write(JSON.stringify(out));
