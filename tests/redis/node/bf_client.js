// node-redis (with its @redis/bloom commands) against the rbf module loaded
// with BF-COMPAT yes.  Usage: node bf_client.js PORT
// Exits 0 when every answer is as expected, 1 with a message otherwise.
'use strict';
const { createClient, RESP_TYPES } = require('redis');

const port = Number(process.argv[2]);
const failures = [];

function check(cond, msg) {
  if (!cond) failures.push(msg);
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function main() {
  // RESP2 first (this node-redis speaks RESP3 by default: see below)
  const client = createClient({ socket: { host: '127.0.0.1', port }, RESP: 2 });
  client.on('error', (e) => failures.push('client error: ' + e));
  await client.connect();
  // chunks of a dump are binary: read bulk strings as Buffers there
  const raw = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });

  check(typeof client.bf.reserve === 'function', 'client.bf.reserve missing');
  check(await client.bf.reserve('users', 0.01, 1000) === 'OK', 'bf.reserve did not answer OK');
  let err = null;
  try { await client.bf.reserve('users', 0.01, 1000); } catch (e) { err = e; }
  check(err && /exists/.test(String(err)), 'bf.reserve of an existing key: ' + err);

  check(await client.bf.add('users', 'alice') === true, 'bf.add of a new item is not true');
  check(await client.bf.add('users', 'alice') === false, 'bf.add of a seen item is not false');
  const madd = await client.bf.mAdd('users', ['bob', 'alice', 'carol']);
  check(same(madd, [true, false, true]), 'bf.mAdd answered ' + JSON.stringify(madd));
  check(await client.bf.exists('users', 'bob') === true, 'bf.exists of an added item is not true');
  check(await client.bf.exists('users', 'nobody-' + Date.now()) === false,
        'bf.exists of a new item is not false');
  const mex = await client.bf.mExists('users', ['alice', 'zzz-never-added', 'carol']);
  check(same(mex, [true, false, true]), 'bf.mExists answered ' + JSON.stringify(mex));
  check(await client.bf.exists('missing-key', 'x') === false, 'bf.exists on a missing key');

  const ins = await client.bf.insert('events', ['e1', 'e2', 'e1'], { CAPACITY: 5000, ERROR: 0.001 });
  check(same(ins, [true, true, false]), 'bf.insert answered ' + JSON.stringify(ins));
  err = null;
  try { await client.bf.insert('nokey', ['x'], { NOCREATE: true }); } catch (e) { err = e; }
  check(err && /not found/.test(String(err)), 'bf.insert NOCREATE on a missing key: ' + err);
  const auto = await client.bf.insert('auto', ['a']);
  check(same(auto, [true]), 'bf.insert creating a key answered ' + JSON.stringify(auto));

  const card = await client.bf.card('users');
  check(card === 3, 'bf.card users = ' + card + ', expected 3');
  check(await client.bf.card('missing-key') === 0, 'bf.card of a missing key is not 0');

  const info = await client.bf.info('users');
  const keys = Object.keys(info || {});
  for (const k of ['Capacity', 'Size', 'Number of filters', 'Number of items inserted',
                   'Expansion rate']) {
    check(keys.includes(k), 'bf.info has no "' + k + '" (has ' + JSON.stringify(keys) + ')');
  }
  check(Number(info['Capacity']) >= 1000, 'bf.info Capacity ' + info['Capacity'] + ' < 1000');
  check(Number(info['Size']) > 0, 'bf.info Size ' + info['Size']);
  check(Number(info['Number of filters']) === 1, 'bf.info Number of filters ' + info['Number of filters']);
  check(Number(info['Number of items inserted']) === 3,
        'bf.info Number of items inserted ' + info['Number of items inserted']);

  // a dump with SCANDUMP, loaded into another key with LOADCHUNK
  if (typeof client.bf.scanDump === 'function' && typeof client.bf.loadChunk === 'function') {
    let iterator = 0;
    let chunks = 0;
    for (;;) {
      const { iterator: next, chunk } = await raw.bf.scanDump('users', iterator);
      iterator = next;
      if (iterator === 0) break;
      check(Buffer.isBuffer(chunk) && chunk.length > 0, 'scanDump chunk is not a non-empty Buffer');
      check(await raw.bf.loadChunk('users-copy', iterator, chunk) === 'OK', 'loadChunk not OK');
      chunks++;
    }
    check(chunks >= 1, 'scanDump gave no chunk');
    const a = await raw.sendCommand(['DEBUG', 'DIGEST-VALUE', 'users']);
    const b = await raw.sendCommand(['DEBUG', 'DIGEST-VALUE', 'users-copy']);
    check(a.length === 1 && b.length === 1 && String(a[0]) === String(b[0]),
          'the copy made with scanDump/loadChunk differs from the filter (digest)');
    const cm = await client.bf.mExists('users-copy', ['alice', 'bob', 'carol']);
    check(same(cm, [true, true, true]), 'the copy answers ' + JSON.stringify(cm));
    console.log('scanDump/loadChunk: ' + chunks + ' chunk(s), copy equal');
  } else {
    failures.push('this @redis/bloom has no scanDump/loadChunk');
  }

  // RESP3 (HELLO 3): booleans for the add/exists answers, a map for info
  const c3 = createClient({ socket: { host: '127.0.0.1', port }, RESP: 3 });
  c3.on('error', (e) => failures.push('RESP3 client error: ' + e));
  await c3.connect();
  const add3 = await c3.bf.add('users', 'dave');
  check(add3 === true, 'RESP3 bf.add of a new item answered ' + JSON.stringify(add3) + ', not true');
  const mex3 = await c3.bf.mExists('users', ['dave', 'zz-never']);
  check(same(mex3, [true, false]), 'RESP3 bf.mExists answered ' + JSON.stringify(mex3));
  const info3 = await c3.bf.info('users');
  const k3 = info3 instanceof Map ? [...info3.keys()] : Object.keys(info3 || {});
  check(k3.map(String).includes('Capacity'), 'RESP3 bf.info has no Capacity: ' + JSON.stringify(k3));
  await c3.quit();

  await client.quit();
}

main().then(() => {
  if (failures.length) {
    for (const f of failures) console.error('FAILED: ' + f);
    process.exit(1);
  }
  console.log('node-redis bf: reserve/add/mAdd/exists/mExists/insert/card/info/scanDump/loadChunk ok');
  process.exit(0);
}, (e) => {
  console.error('FAILED: ' + (e && e.stack || e));
  process.exit(1);
});
