// hog.js - a node host for tests/e2e/host_node.sh: big Buffers kept live (native memory),
// arrays of objects, and strings. Deterministic output.
function hog(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(Buffer.alloc(1 << 20, i & 0xff));
  return out;
}
const kept = hog(48);
let sum = 0;
for (const b of kept) sum += b.length;
const objs = [];
for (let i = 0; i < 200000; i++) objs.push({ i, s: 'x' + i });
console.log('kept', sum, 'objs', objs.length);
// Keep everything live for a second: the collector's time-interval dumps see it (node frees
// its buffers at exit, so the final dump is nearly empty).
setTimeout(() => { console.log('done', kept.length + objs.length); process.exitCode = 5; }, 1200);
