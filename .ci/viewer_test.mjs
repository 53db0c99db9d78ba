// The viewer in a real browser: headless Chromium driven over the Chrome
// DevTools protocol from Node's own WebSocket (node --experimental-websocket
// on Node 20; no npm package, no browser download).
//
//   node --experimental-websocket .ci/viewer_test.mjs --bin target/release/cinestream \
//     --chromium /usr/bin/chromium --out target/viewer-screenshots [--scene scene.cine] [--long long.cine]
//
// Checks: the page loads with no console error; the pose it shows at 20
// scrubbed times (10 on samples, 10 halfway between) equals the library's
// decode (`cinestream export --json`, interpolated here for the halfway
// times); the residency strip changes as pages stream under a 1 MiB budget
// at 2 MB/s, and a jump past what has streamed shown from the preview tier
// and marked on the timeline; with --against the bones are coloured by
// error and the ghost is drawn; the file's camera view on the procedural
// cinematic; a screenshot of each view, its pixels checked for the
// skeleton's colours. With --scene / --long: each plays 6 s while its
// pages stream in a 960x600 page; the frame times measured in the page are
// printed beside the machine's load (the target: 30 fps or more, p99 under
// 33 ms), not gated, since other jobs on the machine move them.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const BIN = path.resolve(args.bin ?? 'target/release/cinestream');
const CHROMIUM = args.chromium ?? '/usr/bin/chromium';
const OUT = path.resolve(args.out ?? 'target/viewer-screenshots');
fs.mkdirSync(OUT, { recursive: true });
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'cinestream-viewer-'));
const children = [];
let failures = 0, passes = 0;

function check(ok, what) {
  if (ok) { passes++; console.log(`ok: ${what}`); } else { failures++; console.log(`FAILED: ${what}`); }
}

function cleanup() {
  for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } }
  // Chromium may still be writing its profile as it dies.
  try { fs.rmSync(work, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }); } catch (e) { console.log(`note: ${work} left behind: ${e.message}`); }
}
process.on('exit', cleanup);
const deadline = setTimeout(() => { console.log('FAILED: the browser test took over 15 minutes'); process.exit(1); }, 15 * 60 * 1000);
deadline.unref();

// ---- test data: a 12-joint chain waving for 40 s, as BVH ----------------
function chainBvh(seconds = 40, rate = 30, joints = 12) {
  let h = 'HIERARCHY\nROOT j0\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n';
  for (let j = 1; j < joints; j++) h += `${'  '.repeat(j)}JOINT j${j}\n${'  '.repeat(j)}{\n${'  '.repeat(j + 1)}OFFSET 0 8 0\n${'  '.repeat(j + 1)}CHANNELS 3 Zrotation Xrotation Yrotation\n`;
  h += `${'  '.repeat(joints)}End Site\n${'  '.repeat(joints)}{\n${'  '.repeat(joints + 1)}OFFSET 0 8 0\n${'  '.repeat(joints)}}\n`;
  for (let j = joints - 1; j >= 0; j--) h += `${'  '.repeat(j)}}\n`;
  const frames = Math.round(seconds * rate);
  h += `MOTION\nFrames: ${frames}\nFrame Time: ${(1 / rate).toFixed(7)}\n`;
  for (let f = 0; f < frames; f++) {
    const t = f / rate;
    const row = [20 * Math.sin(0.3 * t), 2 * Math.sin(2 * t), 10 * t, 10 * Math.sin(0.7 * t), 5 * Math.cos(0.5 * t), 30 * t];
    for (let j = 1; j < joints; j++) row.push(25 * Math.sin(1.3 * t + j), 15 * Math.sin(0.9 * t - 0.5 * j), 10 * Math.cos(1.7 * t + 0.3 * j));
    h += row.map((v) => v.toFixed(4)).join(' ') + '\n';
  }
  return h;
}

// ---- PNG decoding (RGB / RGBA, 8 bits), for the pixel checks -------------
function decodePng(buffer) {
  let pos = 8, width = 0, height = 0, type = 0;
  const idat = [];
  while (pos < buffer.length) {
    const len = buffer.readUInt32BE(pos), kind = buffer.toString('ascii', pos + 4, pos + 8);
    const data = buffer.subarray(pos + 8, pos + 8 + len);
    if (kind === 'IHDR') { width = data.readUInt32BE(0); height = data.readUInt32BE(4); type = data[9]; if (data[8] !== 8) throw new Error('not 8-bit'); }
    if (kind === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  const channels = type === 6 ? 4 : type === 2 ? 3 : 0;
  if (!channels) throw new Error(`PNG colour type ${type}`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels, out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[y * stride + x - channels] : 0;
      const b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? out[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a; else if (filter === 2) v += b; else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      out[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, pixels: out };
}

/// Pixels of `rect` (CSS px = device px here) that match each named test.
function countPixels(png, rect, tests) {
  const counts = Object.fromEntries(Object.keys(tests).map((k) => [k, 0]));
  let other = 0;
  for (let y = Math.floor(rect.y); y < Math.min(png.height, rect.y + rect.height); y++) {
    for (let x = Math.floor(rect.x); x < Math.min(png.width, rect.x + rect.width); x++) {
      const o = (y * png.width + x) * png.channels;
      const [r, g, b] = [png.pixels[o], png.pixels[o + 1], png.pixels[o + 2]];
      let matched = false;
      for (const [name, t] of Object.entries(tests)) if (t(r, g, b)) { counts[name]++; matched = true; break; }
      if (!matched) other++;
    }
  }
  return { ...counts, other };
}
const near = (c, tol = 40) => (r, g, b) => Math.abs(r - c[0]) <= tol && Math.abs(g - c[1]) <= tol && Math.abs(b - c[2]) <= tol;
const BACKGROUND = near([0x14, 0x16, 0x1a], 6);
const SKELETON = near([0x4c, 0xc2, 0xff], 60);
const JOINTS = near([0xff, 0xd7, 0x5e], 50);
// Heat below the threshold: blue through cyan and green to yellow.
const HEAT = (r, g, b) => b > 60 && g > 120 && !BACKGROUND(r, g, b) || (r > 150 && g > 150 && b < 120);
const GHOST = (r, g, b) => Math.abs(r - g) < 12 && Math.abs(g - b) < 12 && r > 70 && r < 200;

// ---- processes -----------------------------------------------------------
function run(argv) {
  return execFileSync(BIN, argv, { cwd: work, encoding: 'utf8' });
}

/// Starts `cinestream ...` serving the viewer; resolves with its URL.
function serve(argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, argv, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '', err = '';
    const timer = setTimeout(() => reject(new Error(`no address from ${argv.join(' ')}: ${out} ${err}`)), 300000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/serving on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) { clearTimeout(timer); resolve({ url: m[1], child }); }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited ${code}: ${err}`)));
  });
}

/// Stops a server with Ctrl-C (SIGINT) and says whether it exited 0.
function stop(child) {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}

// ---- the browser, over the DevTools protocol ------------------------------
async function launchBrowser() {
  const profile = fs.mkdtempSync(path.join(work, 'profile-'));
  const chrome = spawn(CHROMIUM, [
    '--headless', '--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--user-data-dir=${profile}`, '--remote-debugging-port=0', '--window-size=1280,800', '--hide-scrollbars',
    '--mute-audio', 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(chrome);
  const portFile = path.join(profile, 'DevToolsActivePort');
  for (let i = 0; i < 600 && !fs.existsSync(portFile); i++) await sleep(100);
  const [port, wsPath] = fs.readFileSync(portFile, 'utf8').trim().split('\n');
  const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let id = 0;
  const waiting = new Map(), listeners = [];
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && waiting.has(msg.id)) {
      const { resolve, reject } = waiting.get(msg.id);
      waiting.delete(msg.id);
      msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result);
    } else for (const l of listeners) l(msg);
  };
  const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const n = ++id;
    waiting.set(n, { resolve, reject });
    ws.send(JSON.stringify({ id: n, method, params, sessionId }));
  });
  // Closed over the protocol, and waited for, so that its profile can go.
  const close = async () => {
    const exited = new Promise((resolve) => (chrome.exitCode !== null ? resolve() : chrome.once('exit', resolve)));
    await Promise.race([send('Browser.close').catch(() => {}), sleep(5000)]);
    await Promise.race([exited, sleep(10000).then(() => chrome.kill('SIGKILL'))]);
    await Promise.race([exited, sleep(5000)]);
    ws.close();
  };
  return { send, listeners, close };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/// A fresh tab on `url`, with its console errors collected.
async function openPage(browser, url, size = { width: 1280, height: 800 }) {
  const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
  const send = (m, p) => browser.send(m, p, sessionId);
  const errors = [];
  browser.listeners.push((msg) => {
    if (msg.sessionId !== sessionId) return;
    if (msg.method === 'Runtime.consoleAPICalled' && msg.params.type === 'error') errors.push(msg.params.args.map((a) => a.value ?? a.description).join(' '));
    if (msg.method === 'Runtime.exceptionThrown') errors.push(msg.params.exceptionDetails.exception?.description ?? msg.params.exceptionDetails.text);
    if (msg.method === 'Log.entryAdded' && msg.params.entry.level === 'error') errors.push(`${msg.params.entry.text} ${msg.params.entry.url ?? ''}`);
  });
  await send('Runtime.enable');
  await send('Log.enable');
  await send('Page.enable');
  await send('Emulation.setDeviceMetricsOverride', { ...size, deviceScaleFactor: 1, mobile: false });
  // A tab the browser thinks hidden gets its frames throttled.
  await send('Emulation.setFocusEmulationEnabled', { enabled: true });
  await send('Page.bringToFront');
  await send('Page.navigate', { url });
  const evaluate = async (expression) => {
    const r = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (r.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value;
  };
  for (let i = 0; i < 1200; i++) {
    if (await evaluate('!!(window.viewer && window.viewer.state.ready)').catch(() => false)) break;
    await sleep(100);
  }
  const screenshot = async (name) => {
    await sleep(300);
    const { data } = await send('Page.captureScreenshot', { format: 'png' });
    const file = path.join(OUT, `${name}.png`);
    fs.writeFileSync(file, Buffer.from(data, 'base64'));
    const rect = await evaluate('(() => { const r = document.querySelector("#view canvas").getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; })()');
    return { file, png: decodePng(Buffer.from(data, 'base64')), rect };
  };
  return { send, evaluate, errors, screenshot, close: () => browser.send('Target.closeTarget', { targetId }) };
}

// ---- the library's poses, and the test's own interpolation --------------
function slerp(a, b, t) {
  let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  const bb = dot < 0 ? b.map((v) => -v) : b;
  dot = Math.abs(dot);
  if (dot > 0.9995) {
    const q = a.map((v, i) => v + t * (bb[i] - v));
    const n = Math.hypot(...q);
    return q.map((v) => v / n);
  }
  const th = Math.acos(dot), s = Math.sin(th);
  return a.map((v, i) => (Math.sin((1 - t) * th) * v + Math.sin(t * th) * bb[i]) / s);
}

function expectedPose(json, sample, frac) {
  const a = json.samples[sample], b = json.samples[Math.min(sample + 1, json.samples.length - 1)];
  const out = [];
  a.forEach((ta, bone) => {
    const tb = b[bone];
    const q = frac ? slerp(ta.rotation, tb.rotation, frac) : ta.rotation;
    const lerp = (x, y) => x.map((v, i) => v + frac * (y[i] - v));
    out.push(...q, ...lerp(ta.translation, tb.translation), ...lerp(ta.scale, tb.scale));
  });
  return out;
}

/// Largest difference between two poses, rotations sign-insensitive.
function poseDifference(shown, expected) {
  let worst = 0;
  for (let b = 0; b < expected.length / 10; b++) {
    const o = 10 * b;
    const dot = [0, 1, 2, 3].reduce((s, i) => s + shown[o + i] * expected[o + i], 0);
    const sign = dot < 0 ? -1 : 1;
    for (let i = 0; i < 10; i++) {
      const e = i < 4 ? sign * expected[o + i] : expected[o + i];
      worst = Math.max(worst, Math.abs(shown[o + i] - e) / (i >= 4 && i < 7 ? Math.max(1, Math.abs(e)) : 1));
    }
  }
  return worst;
}

function percentiles(times) {
  const s = [...times].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { frames: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1] };
}

/// Plays `seconds` at `rate` and returns the page's frame times and the
/// residency strings it saw.
// Plays for `seconds` of wall time, and on past that (up to a minute) until
// the playhead reaches `untilTime` seconds of the file: the page's clock
// moves one step per display frame, so a loaded machine that shows fewer
// frames plays less of the file in the same wall time.
async function playFor(page, seconds, rate = 1, untilTime = 0) {
  await page.evaluate(`viewer.state.rate = ${rate}; viewer.state.frameTimes.length = 0; viewer.state.starved = 0; viewer.setPlaying(true)`);
  const strips = new Set();
  const start = Date.now();
  const until = start + seconds * 1000;
  for (;;) {
    strips.add(await page.evaluate('viewer.state.residency ? viewer.state.residency.pages : ""'));
    const now = Date.now();
    if (now >= until && (now >= start + 60000 || (await page.evaluate('viewer.state.time')) >= untilTime)) break;
    await sleep(200);
  }
  await page.evaluate('viewer.setPlaying(false)');
  const times = await page.evaluate('viewer.state.frameTimes');
  const costs = await page.evaluate('({ work: viewer.state.workMs, render: viewer.state.renderMs, panels: viewer.state.panelsMs, starved: viewer.state.starved })');
  console.log(`last frame: poses fetched in ${costs.work?.toFixed(1)} ms (a batch, ahead of the display), scene rendered in ${costs.render?.toFixed(1)} ms, timeline and panels in ${costs.panels?.toFixed(1)} ms; ${costs.starved} display frames found no pose queued`);
  const residency = await page.evaluate('viewer.state.residency');
  return { times, strips, residency };
}

// ---- the checks ---------------------------------------------------------
// Seconds the scene and the long take each play: some 360 display frames
// at 60 Hz, enough for a p99 (the 4th worst) without lengthening CI.
const CORPUS_PLAY_S = 6;
const CORPUS_PAGE = { width: 960, height: 600 };

async function main() {
  fs.writeFileSync(path.join(work, 'chain.bvh'), chainBvh());
  run(['pack', 'chain.bvh', '-o', 'chain.cine', '--page-kib', '8']);
  run(['export', 'chain.cine', '-o', 'chain.json']);
  const decoded = JSON.parse(fs.readFileSync(path.join(work, 'chain.json'), 'utf8'));
  const browser = await launchBrowser();

  // 1. Poses against the library at 20 scrubbed times, with the sources.
  {
    const server = await serve(['view', 'chain.cine', '--against', 'chain.bvh']);
    const page = await openPage(browser, server.url);
    const n = decoded.samples.length, rate = decoded.sample_rate;
    let worst = 0, where = null;
    for (let i = 0; i < 20; i++) {
      const sample = Math.round((i * (n - 2)) / 19);
      const frac = i % 2 ? 0.5 : 0;
      const time = (sample + frac) / rate;
      await page.evaluate(`viewer.seek(${time})`);
      const shown = await page.evaluate('({ time: viewer.state.time, pose: viewer.state.pose })');
      const d = poseDifference(shown.pose, expectedPose(decoded, sample, frac));
      if (d > worst) { worst = d; where = time; }
      check(Math.abs(shown.time - time) < 1e-9, `scrub ${i + 1}: the page is at ${time.toFixed(4)} s`);
    }
    console.log(`poses at 20 scrubbed times against the library's decode: worst difference ${worst.toExponential(2)} (at ${where?.toFixed(4)} s)`);
    check(worst < 1e-4, 'the page shows the library\'s pose at each scrubbed time (within 1e-4)');
    // The error heat: the worst frame, every bone's error coloured.
    const curve = await page.evaluate('viewer.errorCurve');
    await page.evaluate(`viewer.seek(${curve.worst_time})`);
    const heat = await page.evaluate('({ errors: viewer.state.errors, shown: viewer.state.errorsShown, source: viewer.state.sourceTime })');
    check(heat.shown > 0 && heat.errors.length === decoded.bones.length, 'each bone has an error at the current time');
    const worstShown = Math.max(...heat.errors);
    check(Math.abs(worstShown - curve.max_cm) <= 1e-6 * Math.max(1, curve.max_cm), `at the worst frame the worst bone shows the clip's worst error (${worstShown.toFixed(6)} cm)`);
    check(curve.max_cm <= curve.threshold_cm, `the clip's worst error is within its threshold (${curve.max_cm.toFixed(5)} <= ${curve.threshold_cm} cm)`);
    const shot = await page.screenshot('against-orbit');
    const px = countPixels(shot.png, shot.rect, { background: BACKGROUND, joints: JOINTS, heat: HEAT, ghost: GHOST });
    console.log(`${shot.file}: ${JSON.stringify(px)}`);
    check(px.heat > 200, 'the skeleton is drawn in heat colours');
    check(px.ghost > 50, 'the source is drawn as a ghost');
    check(px.joints > 20, 'the joints are drawn');
    check(page.errors.length === 0, `no console error (${page.errors.join(' | ')})`);
    check(await stop(server.child) === 0, 'Ctrl-C stops the server, exit status 0');
    await page.close();
  }

  // 2. The residency strip under a 1 MiB budget at 2 MB/s.
  {
    const server = await serve(['view', 'chain.cine', '--budget-mib', '1', '--throttle-mbps', '2', '--missing-page', 'preview']);
    const page = await openPage(browser, server.url);
    // A jump past what has streamed: the page shows the preview tier there
    // and marks it on the timeline.
    const preview = await page.evaluate('viewer.seek(38).then(() => ({ quality: viewer.state.quality, marks: viewer.state.previewTimes, duration: viewer.meta.duration }))');
    check(preview.quality === 'preview' && preview.marks.includes(38), `a jump to a page not yet loaded shows the preview tier (${preview.quality}, ${preview.marks.length} marks)`);
    await page.evaluate('viewer.seek(0)');
    // At 4x, 4 s of play cross four of the file's pages of 4.4 s each (on
    // past 4 s of wall time until the playhead has crossed them).
    const { strips, residency, times } = await playFor(page, 4, 4, 4 * 4.4);
    console.log(`residency: ${strips.size} different strips over 4 s of play at 4x; ${residency.page_loads} page loads, ${residency.prefetch_loads} by the prefetcher, ${residency.stalls} stalls, ${residency.resident_bytes} of ${residency.budget_bytes} bytes resident; ${times.length} frames`);
    check(strips.size >= 3, 'the residency strip changes as pages stream');
    check(residency.prefetch_loads > 0, 'the prefetcher loads pages ahead of the playhead');
    check(residency.peak_resident_bytes <= residency.budget_bytes, 'resident bytes stay within the budget');
    // The playhead off the mark, so as not to hide it.
    await page.evaluate('viewer.seek(1)');
    const shot = await page.screenshot('residency');
    const px = countPixels(shot.png, shot.rect, { background: BACKGROUND, skeleton: SKELETON, joints: JOINTS });
    console.log(`${shot.file}: ${JSON.stringify(px)}`);
    check(px.skeleton > 200 && px.joints > 20, 'the skeleton is drawn (bones and joints)');
    // The mark: a short tick above the timeline's labels at its time.
    const line = await page.evaluate('(() => { const r = document.getElementById("timeline").getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; })()');
    const column = (t) => Math.floor(line.x) + Math.floor((t / preview.duration) * Math.round(line.width));
    const MARK = near([0xff, 0x7b, 0x72], 30);
    const mark = countPixels(shot.png, { x: column(38), y: line.y + line.height - 17, width: 1, height: 6 }, { mark: MARK });
    // And none where no preview frame was shown.
    const marks = await page.evaluate('viewer.state.previewTimes');
    const awayTime = [20, 10, 30, 5, 25, 15].find((t) => marks.every((m) => Math.abs(m - t) > 1));
    const away = countPixels(shot.png, { x: column(awayTime), y: line.y + line.height - 17, width: 1, height: 6 }, { mark: MARK });
    check(mark.mark === 6 && away.mark === 0, `the preview frame is marked on the timeline at 38 s (${mark.mark} of 6 pixels there, ${away.mark} at ${awayTime} s)`);
    check(page.errors.length === 0, `no console error (${page.errors.join(' | ')})`);
    check(await stop(server.child) === 0, 'Ctrl-C stops the server, exit status 0');
    await page.close();
  }

  // 3. The procedural cinematic's camera.
  {
    const server = await serve(['demo', '--view', '--seconds', '20', '--actors', '4']);
    const page = await openPage(browser, server.url);
    await page.evaluate('viewer.seek(7.5)');
    const orbit = await page.screenshot('demo-orbit');
    await page.evaluate('document.getElementById("camera").value = "file"; document.getElementById("camera").dispatchEvent(new Event("change")); viewer.seek(7.5)');
    const cam = await page.evaluate('({ view: viewer.state.view, fov: viewer.fileCamera.fov, floats: viewer.state.floats, fovValue: viewer.meta.camera && viewer.meta.camera.fov_value })');
    check(cam.view === 'file' && cam.fovValue !== null, 'the file\'s camera is selectable');
    const fovDegrees = cam.floats[cam.fovValue] * 180 / Math.PI;
    check(Math.abs(cam.fov - fovDegrees) < 1e-3, `the camera view's field of view is the file's (${cam.fov.toFixed(3)} degrees)`);
    const shot = await page.screenshot('demo-camera');
    const a = countPixels(orbit.png, orbit.rect, { background: BACKGROUND, heat: HEAT, joints: JOINTS });
    const b = countPixels(shot.png, shot.rect, { background: BACKGROUND, heat: HEAT, joints: JOINTS });
    console.log(`${orbit.file}: ${JSON.stringify(a)}\n${shot.file}: ${JSON.stringify(b)}`);
    check(b.heat + b.joints > 200, 'the camera view shows the cast');
    let differ = 0;
    for (let i = 0; i < orbit.png.pixels.length; i += 97) if (orbit.png.pixels[i] !== shot.png.pixels[i]) differ++;
    check(differ > 100, 'the camera view is not the orbit view');
    check(page.errors.length === 0, `no console error (${page.errors.join(' | ')})`);
    check(await stop(server.child) === 0, 'Ctrl-C stops the server, exit status 0');
    await page.close();
  }

  // 3b. A file packed to a screen-space bound: each bone against its own
  // allowed error, coloured by the share of it used.
  {
    run(['pack', 'procedural:2:3', '--screen-px', '0.5', '--preview-cm', '0', '-o', 'shot.cine']);
    const server = await serve(['view', 'shot.cine', '--against', 'procedural:2:3']);
    const page = await openPage(browser, server.url);
    await page.evaluate('viewer.seek(1.5)');
    const shown = await page.evaluate('new Promise((done) => setTimeout(() => done({ errors: viewer.state.errors, allowed: viewer.state.allowed, panel: document.getElementById("error").textContent, screen: viewer.meta.screen, camera: viewer.meta.bones.indexOf("Camera") }), 500))');
    check(shown.screen && shown.screen.allowed, 'the page knows the file\'s screen bound');
    check(Array.isArray(shown.allowed) && shown.allowed.length === shown.errors.length, 'each bone has an allowed error beside its error');
    // The camera's bone is held at a wider shell than the error is shown at.
    const over = shown.errors.filter((e, b) => b !== shown.camera && e > shown.allowed[b] * (1 + 1e-5));
    check(over.length === 0, `every bone within its allowed error (${over.length} over)`);
    check(shown.panel.includes('most of its allowed'), `the error panel shows the share of the allowed error used (${shown.panel.slice(0, 120)})`);
    check(page.errors.length === 0, `no console error (${page.errors.join(' | ')})`);
    check(await stop(server.child) === 0, 'Ctrl-C stops the server, exit status 0');
    await page.close();
  }

  // 4. The corpus' scene and take, when given: frame times while streaming.
  for (const [name, file] of [['scene', args.scene], ['long', args.long]]) {
    if (!file) continue;
    const server = await serve(['view', path.resolve(file), '--budget-mib', '1', '--throttle-mbps', '2']);
    // A smaller page than the others: SwiftShader rasters and composites
    // every pixel on the CPU, which the other jobs of a busy 2-core
    // machine share.
    const page = await openPage(browser, server.url, CORPUS_PAGE);
    await page.evaluate('viewer.seek(30)');
    const { times, strips, residency } = await playFor(page, CORPUS_PLAY_S);
    const p = percentiles(times);
    // The machine's load beside them: a display frame the browser misses
    // while other jobs hold the CPU shows as 33.4 ms (two 60 Hz frames).
    console.log(`${name}: ${p.frames} frames in ${CORPUS_PLAY_S} s of play in the page, frame time p50 ${p.p50.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms, max ${p.max.toFixed(1)} ms; ${strips.size} residency strips, ${residency.page_loads} page loads, ${residency.stalls} stalls; load average ${os.loadavg()[0].toFixed(2)} on ${os.cpus().length} CPUs`);
    await page.screenshot(name);
    // Frame time: between two display frames that each showed a new pose
    // (requestAnimationFrame's clock, measured in the page).
    // Measured and printed, not gated: wall-clock times on a shared machine
    // would make CI fail for what other jobs do (a missed display frame
    // under load reads 33.4 ms). What is gated is what timing cannot move:
    // the page showed a new pose on most frames it played.
    const fps = p.frames / CORPUS_PLAY_S;
    const met = fps >= 30 && p.p99 < 33 ? 'met' : 'NOT met (see the load average)';
    console.log(`${name}: 30 fps with p99 under 33 ms: ${met}`);
    check(p.frames > 0 && strips.size >= 1, `${name}: the page played frames`);
    // Whether the playhead crosses a page in 6 s depends on the file's page
    // length and on how far the prefetcher got before play began, so
    // streaming is checked by a jump that must load pages: far ahead, the
    // strip has to change and the loads to grow, whatever the timing.
    const before = residency;
    await page.evaluate(`viewer.seek(viewer.meta.duration * 0.6)`);
    let after = before;
    for (let waited = 0; waited < 10000 && !(after.page_loads > before.page_loads && after.pages !== before.pages); waited += 100) {
      await sleep(100);
      after = await page.evaluate('viewer.state.residency');
    }
    console.log(`${name}: a jump to 60 % of the file: page loads ${before.page_loads} -> ${after.page_loads}, strip changed: ${after.pages !== before.pages}`);
    check(after.page_loads > before.page_loads && after.pages !== before.pages && after.peak_resident_bytes <= after.budget_bytes,
      `${name}: pages stream in under the budget where the playhead goes`);
    check(page.errors.length === 0, `${name}: no console error (${page.errors.join(' | ')})`);
    check(await stop(server.child) === 0, `${name}: Ctrl-C stops the server`);
    await page.close();
  }
  await browser.close();
}

main().then(() => {
  console.log(`viewer: ${passes} passed, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}, (e) => {
  console.log(`FAILED: ${e.stack ?? e}`);
  console.log(`viewer: ${passes} passed, ${failures + 1} failed`);
  process.exit(1);
});
