// The cinestream viewer: asks the program's server (tools/src/cmd/view/)
// for the poses the real stream and player give, draws every actor's
// skeleton with three.js, and shows the file's pages, error and float
// tracks over a timeline. Playing, it asks for a few display frames ahead
// at a time and shows one per display frame on its own clock, so that the
// browser's round trip to the server never holds a frame back; a seek
// asks for its one pose and waits for it. Its state is
// `window.viewer.state`, which the browser test in .ci/viewer_test.mjs
// reads (`frameTimes`: between display frames that showed a new pose).
import * as THREE from 'three';
import { OrbitControls } from '/vendor/OrbitControls.js';

const BONE_FLOATS = 10;
const POSE_HEADER = 24;
const COLORS = { resident: '#3fb950', loading: '#d29922', evicted: '#6e7681', corrupt: '#f85149', never: '#2a2e36' };
const SKELETON_COLOR = new THREE.Color('#4cc2ff');
const GHOST_COLOR = new THREE.Color('#f0f0f0');
const JOINT_COLOR = new THREE.Color('#ffd75e');
const FRAME_TIMES_KEPT = 20000;
// Playing, the page asks the player for BATCH poses at a time, one display
// frame (STEP_MS of wall time) apart, whenever fewer than LOW_WATER are
// queued: a round trip through the browser's network stack (several ms,
// tens on a loaded machine) is then hidden behind the frames already
// queued instead of delaying every frame.
const STEP_MS = 1000 / 60;
const BATCH = 8;
const LOW_WATER = 8;
// Panels that change layout (text, tables) are refreshed at most this often.
const PANEL_MS = 200;

const $ = (id) => document.getElementById(id);

async function fetchJson(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return r.arrayBuffer();
}

/// A pose answer at byte `at` of `buffer`: time, flags, bones, float
/// values, then the floats; `end` is where the next pose of a batch starts.
function parsePose(buffer, at = 0) {
  const view = new DataView(buffer, at);
  const time = view.getFloat64(0, true);
  const flags = view.getUint32(8, true);
  const bones = view.getUint32(12, true);
  const tail = view.getUint32(16, true);
  const extra = view.getUint32(20, true);
  const pose = new Float32Array(buffer, at + POSE_HEADER, bones * BONE_FLOATS);
  const values = new Float32Array(buffer, at + POSE_HEADER + 4 * bones * BONE_FLOATS, tail);
  const end = at + POSE_HEADER + 4 * (bones * BONE_FLOATS + tail);
  return { time, flags, bones, pose, values, extra, end };
}

/// Every pose of a batch answer.
function parsePoses(buffer) {
  const poses = [];
  for (let at = 0; at < buffer.byteLength;) {
    const pose = parsePose(buffer, at);
    poses.push(pose);
    at = pose.end;
  }
  return poses;
}

/// Object-space matrices of a local pose (parents come before children).
function worldMatrices(pose, parents, out) {
  const q = new THREE.Quaternion(), t = new THREE.Vector3(), s = new THREE.Vector3();
  const local = new THREE.Matrix4();
  for (let b = 0; b < parents.length; b++) {
    const o = b * BONE_FLOATS;
    q.set(pose[o], pose[o + 1], pose[o + 2], pose[o + 3]);
    t.set(pose[o + 4], pose[o + 5], pose[o + 6]);
    s.set(pose[o + 7], pose[o + 8], pose[o + 9]);
    local.compose(t, q, s);
    if (parents[b] >= 0) out[b].multiplyMatrices(out[parents[b]], local);
    else out[b].copy(local);
  }
}

/// Blue (no error) through yellow (the threshold) to red (twice it or more).
function heat(error, threshold, color) {
  const x = Math.min(error / threshold, 2) / 2;
  if (x < 0.5) color.setRGB(0.2 + 1.4 * x, 0.55 + 0.7 * x, 1.0 - 1.6 * x);
  else color.setRGB(0.9 + 0.2 * (x - 0.5), 0.9 - 1.6 * (x - 0.5), 0.2 - 0.4 * (x - 0.5));
  return color;
}

class Skeleton {
  /// Lines from each drawn bone to its parent, a point at each joint.
  constructor(meta, color, opacity, skip) {
    this.parents = meta.parents;
    this.drawn = [];
    for (let b = 0; b < meta.parents.length; b++) {
      if (meta.parents[b] >= 0 && !skip.has(b) && !skip.has(meta.parents[b])) this.drawn.push(b);
    }
    this.matrices = meta.parents.map(() => new THREE.Matrix4());
    const lines = new THREE.BufferGeometry();
    lines.setAttribute('position', new THREE.BufferAttribute(new Float32Array(this.drawn.length * 6), 3));
    lines.setAttribute('color', new THREE.BufferAttribute(new Float32Array(this.drawn.length * 6), 3));
    this.lineColors = lines.getAttribute('color');
    for (let i = 0; i < this.drawn.length * 2; i++) this.lineColors.setXYZ(i, color.r, color.g, color.b);
    this.lines = new THREE.LineSegments(lines, new THREE.LineBasicMaterial({
      vertexColors: true, transparent: opacity < 1, opacity, depthTest: opacity >= 1 }));
    const joints = new THREE.BufferGeometry();
    this.jointBones = meta.parents.map((_, b) => b).filter((b) => !skip.has(b));
    joints.setAttribute('position', new THREE.BufferAttribute(new Float32Array(this.jointBones.length * 3), 3));
    this.joints = new THREE.Points(joints, new THREE.PointsMaterial({
      color: opacity < 1 ? color : JOINT_COLOR, size: opacity < 1 ? 3 : 5, sizeAttenuation: false,
      transparent: opacity < 1, opacity }));
    this.group = new THREE.Group();
    this.group.add(this.lines, this.joints);
    this.positions = new Float32Array(meta.parents.length * 3);
  }

  update(pose) {
    worldMatrices(pose, this.parents, this.matrices);
    const p = this.positions;
    for (let b = 0; b < this.matrices.length; b++) {
      const e = this.matrices[b].elements;
      p[3 * b] = e[12]; p[3 * b + 1] = e[13]; p[3 * b + 2] = e[14];
    }
    const lines = this.lines.geometry.getAttribute('position');
    this.drawn.forEach((b, i) => {
      const a = this.parents[b];
      lines.setXYZ(2 * i, p[3 * a], p[3 * a + 1], p[3 * a + 2]);
      lines.setXYZ(2 * i + 1, p[3 * b], p[3 * b + 1], p[3 * b + 2]);
    });
    lines.needsUpdate = true;
    this.lines.geometry.computeBoundingSphere();
    const joints = this.joints.geometry.getAttribute('position');
    this.jointBones.forEach((b, i) => joints.setXYZ(i, p[3 * b], p[3 * b + 1], p[3 * b + 2]));
    joints.needsUpdate = true;
    this.joints.geometry.computeBoundingSphere();
  }

  /// Colours each line by its child bone's error.
  colour(errors, threshold) {
    const c = new THREE.Color();
    this.drawn.forEach((b, i) => {
      heat(errors[b], threshold, c);
      this.lineColors.setXYZ(2 * i, c.r, c.g, c.b);
      this.lineColors.setXYZ(2 * i + 1, c.r, c.g, c.b);
    });
    this.lineColors.needsUpdate = true;
  }
}

function percentile(sorted, p) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

class Viewer {
  constructor(meta, floatCurves, errorCurve) {
    this.meta = meta;
    this.floatCurves = floatCurves;
    this.errorCurve = errorCurve;
    this.state = {
      ready: false, time: 0, rate: 1, playing: false, loop: meta.loop, view: 'orbit',
      quality: 'full', poseReady: true, frames: 0,
      frameTimes: [], residency: null, errors: null, allowed: null, sourceTime: null, previewTimes: [],
      errorsShown: 0, lastError: null, starved: 0,
    };
    this.busy = false;
    this.pending = null;
    // Poses asked for ahead of the display, each with the play clock (ms
    // since play began) at which it is due.
    this.queue = [];
    this.nextDue = STEP_MS;
    this.clock = 0;
    this.lastTick = null;
    this.lastShown = null;
    // Bumped whenever queued poses stop being wanted (seek, pause, rate):
    // a batch asked for before is dropped when it arrives.
    this.generation = 0;
    this.againstBusy = false;
    this.panelsAt = -Infinity;
    // The pose shown and its float values, as arrays (read by the browser
    // test); kept as the answer's views until asked for.
    this.shownPose = null;
    Object.defineProperty(this.state, 'pose', { enumerable: true, get: () => (this.shownPose ? Array.from(this.shownPose.pose) : []) });
    Object.defineProperty(this.state, 'floats', { enumerable: true, get: () => (this.shownPose ? Array.from(this.shownPose.values) : []) });
    this.setupScene();
    this.setupControls();
    this.drawInspect();
  }

  setupScene() {
    const meta = this.meta;
    const host = $('view');
    // No multisampling: in a software renderer (headless, remote desktops) it
    // costs more than the rest of the frame.
    this.renderer = new THREE.WebGLRenderer({ antialias: false });
    this.renderer.setPixelRatio(1);
    this.renderer.setClearColor('#14161a');
    host.appendChild(this.renderer.domElement);
    this.scene = new THREE.Scene();
    this.orbit = new THREE.PerspectiveCamera(40, 1, 1, 1e6);
    this.fileCamera = new THREE.PerspectiveCamera(40, 1, 1, 1e6);
    this.controls = new OrbitControls(this.orbit, this.renderer.domElement);
    this.controls.enableDamping = false;
    const skip = new Set();
    this.cameraBone = meta.camera ? meta.camera.bone : -1;
    if (this.cameraBone >= 0) {
      skip.add(this.cameraBone);
      $('camera').add(new Option('file camera', 'file'));
    }
    // The scene root of a cast joins nothing worth a line.
    if (meta.actors.length > 1 && meta.parents[0] < 0 && meta.bones[0].toLowerCase() === 'scene') skip.add(0);
    this.skip = skip;
    this.skeleton = new Skeleton(meta, SKELETON_COLOR, 1, skip);
    this.scene.add(this.skeleton.group);
    if (meta.against) {
      this.ghost = new Skeleton(meta, GHOST_COLOR, 0.45, skip);
      this.scene.add(this.ghost.group);
    } else {
      for (const id of ['ghost-label', 'worst', 'error', 'error-head']) $(id).style.display = 'none';
    }
    this.grid = new THREE.GridHelper(1, 20, 0x30343c, 0x24272d);
    this.scene.add(this.grid);
    new ResizeObserver(() => this.resize()).observe(host);
    this.resize();
  }

  resize() {
    const host = $('view');
    const w = Math.max(1, host.clientWidth), h = Math.max(1, host.clientHeight);
    this.renderer.setSize(w, h, false);
    for (const c of [this.orbit, this.fileCamera]) { c.aspect = w / h; c.updateProjectionMatrix(); }
    for (const id of ['timeline', 'floats', 'histogram']) {
      const c = $(id);
      c.width = c.clientWidth; c.height = c.clientHeight;
    }
    this.drawFloats();
    this.drawHistogram();
    this.floatsDrawn = null;
  }

  /// Puts the orbit camera around the skeleton once, from its first pose.
  frame() {
    const box = this.center();
    const size = box.getSize(new THREE.Vector3()).length() || 1;
    const center = box.getCenter(new THREE.Vector3());
    this.controls.target.copy(center);
    this.orbit.position.copy(center).add(new THREE.Vector3(0.6, 0.45, 1).multiplyScalar(size * 1.1));
    this.orbit.near = size / 1000; this.orbit.far = size * 100;
    this.fileCamera.near = size / 1000; this.fileCamera.far = size * 100;
    this.orbit.updateProjectionMatrix();
    this.controls.update();
    this.grid.scale.setScalar(size * 2);
    this.grid.position.set(center.x, box.min.y, center.z);
  }

  /// The centre of the drawn joints.
  center() {
    const box = new THREE.Box3(), v = new THREE.Vector3();
    const p = this.skeleton.positions;
    for (let b = 0; b < p.length / 3; b++) {
      if (!this.skip.has(b)) box.expandByPoint(v.set(p[3 * b], p[3 * b + 1], p[3 * b + 2]));
    }
    return box;
  }

  /// Keeps the orbit camera on the cast as it moves: the target follows
  /// the joints' centre, the camera keeps its offset from it.
  follow() {
    const box = this.center();
    if (box.isEmpty()) return;
    const center = box.getCenter(new THREE.Vector3());
    const shift = center.clone().sub(this.controls.target);
    this.controls.target.add(shift);
    this.orbit.position.add(shift);
    this.controls.update();
    this.grid.position.set(center.x, this.grid.position.y, center.z);
  }

  setupControls() {
    const s = this.state;
    $('play').onclick = () => this.setPlaying(!s.playing);
    $('back').onclick = () => this.step(-1);
    $('fwd').onclick = () => this.step(1);
    $('speed').onchange = () => { const v = Number($('speed').value); if (Number.isFinite(v)) this.setRate(v); };
    $('loop').checked = s.loop;
    $('loop').onchange = () => this.setLoop($('loop').checked);
    $('go').onclick = () => this.seek(Number($('jump').value));
    $('jump').onkeydown = (e) => { if (e.key === 'Enter') this.seek(Number($('jump').value)); };
    $('camera').onchange = () => { s.view = $('camera').value; };
    this.followChecked = $('follow').checked;
    $('follow').onchange = () => { this.followChecked = $('follow').checked; };
    $('ghost').onchange = () => { if (this.ghost) this.ghost.group.visible = $('ghost').checked; };
    $('worst').onclick = () => this.errorCurve && this.seek(this.errorCurve.worst_time);
    window.addEventListener('keydown', (e) => {
      if (e.target.tagName === 'INPUT') return;
      if (e.key === ' ') { this.setPlaying(!s.playing); e.preventDefault(); }
      if (e.key === ',') this.step(-1);
      if (e.key === '.') this.step(1);
    });
    const timeline = $('timeline');
    let dragging = false;
    const timeAt = (e) => {
      const r = timeline.getBoundingClientRect();
      return Math.min(1, Math.max(0, (e.clientX - r.left) / r.width)) * this.meta.duration;
    };
    timeline.onpointerdown = (e) => {
      const r = timeline.getBoundingClientRect();
      const y = e.clientY - r.top;
      // A click on the error curve jumps to the worst frame near it.
      if (this.errorCurve && y >= this.rows.error[0] && y < this.rows.error[1]) {
        this.seek(this.worstNear(timeAt(e)));
        return;
      }
      dragging = true;
      timeline.setPointerCapture(e.pointerId);
      this.setPlaying(false);
      this.seek(timeAt(e));
    };
    timeline.onpointermove = (e) => { if (dragging) this.seek(timeAt(e)); };
    timeline.onpointerup = () => { dragging = false; };
  }

  worstNear(time) {
    const span = this.meta.duration / 50;
    let best = null;
    for (const [t, e] of this.errorCurve.points) {
      if (Math.abs(t - time) <= span && (!best || e > best[1])) best = [t, e];
    }
    return best ? best[0] : time;
  }

  setPlaying(playing) {
    const was = this.state.playing;
    this.state.playing = playing;
    this.restartClock();
    // The player ran ahead of the display by the queued poses: back to
    // the pose shown.
    if (was && !playing) this.seek(this.state.time);
    $('play').innerHTML = playing ? '&#10074;&#10074;' : '&#9654;';
  }

  /// Forgets the queued poses; playing goes on from the pose shown.
  restartClock() {
    this.queue.length = 0;
    this.generation++;
    this.clock = 0;
    this.nextDue = STEP_MS;
    this.lastTick = null;
    this.lastShown = null;
  }

  setRate(rate) {
    this.state.rate = rate;
    if (this.state.playing) { this.restartClock(); this.seek(this.state.time); }
  }

  async setLoop(wrap) {
    this.state.loop = wrap;
    this.restartClock();
    await fetch(`/api/loop?mode=${wrap ? 'wrap' : 'clamp'}`);
    this.seek(this.state.time);
  }

  step(frames) {
    this.setPlaying(false);
    return this.seek(this.state.time + frames / this.meta.sample_rate);
  }

  /// Moves the playhead to `time` through the player; resolves once the
  /// pose there is drawn.
  seek(time) {
    if (!Number.isFinite(time)) return Promise.resolve();
    this.restartClock();
    return new Promise((resolve) => {
      if (this.pending) this.pending.resolve();
      this.pending = { time, resolve };
      this.pump();
    });
  }

  /// One display frame: while playing, moves the play clock on and shows
  /// the last queued pose now due; then keeps the queue filled.
  tick(now) {
    const s = this.state;
    if (s.playing) {
      if (this.lastTick !== null) this.clock += Math.min(now - this.lastTick, 1000);
      this.lastTick = now;
      let due = null;
      // Half a step of slack: display frames a little early or late still
      // take one pose each.
      while (this.queue.length && this.queue[0].due <= this.clock + STEP_MS / 2) {
        due = this.queue.shift();
        if ((due.pose.flags & 3) === 3) s.previewTimes.push(due.pose.time);
      }
      // A display frame with no pose yet: the queue ran dry.
      if (!due && this.lastShown !== null) s.starved++;
      if (due) {
        this.show(due.pose, false);
        if (this.lastShown !== null) {
          s.frameTimes.push(now - this.lastShown);
          if (s.frameTimes.length > FRAME_TIMES_KEPT) s.frameTimes.shift();
        }
        this.lastShown = now;
        if (this.meta.against && this.ghost && !this.againstBusy) {
          this.againstBusy = true;
          this.showAgainst(due.pose.time).catch((e) => { s.lastError = String(e); })
            .finally(() => { this.againstBusy = false; });
        }
      }
    }
    this.pump();
  }

  /// Sends the next request the page needs (a seek, or a batch of poses
  /// ahead), one at a time so that the player sees them in order.
  async pump() {
    const s = this.state;
    if (this.busy) return;
    let url = null, seek = null;
    if (this.pending) {
      seek = this.pending;
      this.pending = null;
      url = `/api/pose?seek=${seek.time}`;
    } else if (s.playing && this.queue.length < LOW_WATER) {
      url = `/api/pose?dt=${STEP_MS / 1000}&rate=${s.rate}&count=${BATCH}`;
    }
    if (!url) return;
    this.busy = true;
    const generation = this.generation;
    const started = performance.now();
    try {
      const buffer = await fetchBytes(url);
      s.workMs = performance.now() - started;
      if (seek) {
        const pose = parsePose(buffer);
        this.show(pose, true);
        if (this.meta.against && this.ghost) await this.showAgainst(pose.time);
      } else if (generation === this.generation) {
        for (const pose of parsePoses(buffer)) {
          this.queue.push({ pose, due: this.nextDue });
          this.nextDue += STEP_MS;
        }
      }
    } catch (e) {
      s.lastError = String(e);
      console.warn(e);
    } finally {
      this.busy = false;
      if (seek) seek.resolve();
    }
    this.pump();
  }

  /// Draws `pose`; `now` says to update the panels at once (a seek), not
  /// at their own pace.
  show(pose, now) {
    const s = this.state;
    const ready = (pose.flags & 1) !== 0;
    s.time = pose.time;
    s.poseReady = ready;
    s.quality = (pose.flags & 2) ? 'preview' : 'full';
    // Poses played are marked as they leave the queue (see `tick`).
    if (now && ready && s.quality === 'preview') s.previewTimes.push(pose.time);
    this.shownPose = pose;
    s.frames++;
    this.skeleton.update(pose.pose);
    if (this.cameraBone >= 0) {
      this.fileCamera.matrixAutoUpdate = false;
      this.fileCamera.matrixWorld.copy(this.skeleton.matrices[this.cameraBone]);
      this.fileCamera.matrixWorldInverse.copy(this.fileCamera.matrixWorld).invert();
      const fov = this.meta.camera.fov_value;
      if (fov !== null && fov !== undefined && Number.isFinite(pose.values[fov])) {
        this.fileCamera.fov = THREE.MathUtils.radToDeg(pose.values[fov]);
        this.fileCamera.updateProjectionMatrix();
      }
    }
    if (!this.framed) { this.frame(); this.framed = true; } else if (this.followChecked) this.follow();
    if (now) this.panelsAt = -Infinity;
  }

  async showAgainst(time) {
    const buffer = await fetchBytes(`/api/against?t=${time}`);
    const a = parsePose(buffer);
    this.ghost.update(a.pose);
    this.state.errors = Array.from(a.values);
    this.state.sourceTime = a.time;
    this.state.errorsShown++;
    let worst = 0, bone = 0;
    a.values.forEach((e, b) => { if (e > worst) { worst = e; bone = b; } });
    const screen = this.meta.screen;
    if (screen && screen.allowed) {
      // A file packed to a screen-space bound: each bone against its own
      // allowed error there (pixels at its depth through the camera),
      // coloured by the share of it used.
      const allowed = (await fetchJson(`/api/allowed?t=${time}`)).allowed_cm;
      this.state.allowed = allowed;
      const share = Array.from(a.values, (e, b) => e / Math.max(allowed[b], 1e-12));
      this.skeleton.colour(share, 1);
      let most = 0, at = 0;
      share.forEach((r, b) => { if (r > most) { most = r; at = b; } });
      this.errorRows = rows([
        ['this frame, worst', `${worst.toFixed(5)} cm (allowed ${allowed[bone].toFixed(5)} cm)`],
        ['bone', escapeHtml(this.meta.bones[bone] ?? '')],
        ['most of its allowed', `${(100 * most).toFixed(1)} % (${escapeHtml(this.meta.bones[at] ?? '')}: ${a.values[at].toFixed(5)} of ${allowed[at].toFixed(5)} cm)`],
        ['bound', `${screen.pixels} px at ${screen.resolution[0]}x${screen.resolution[1]}, ${this.errorCurve.threshold_cm} to ${screen.max_cm} cm`],
        ['clip, worst', `${screen.worst_px.toFixed(3)} px, ${this.errorCurve.max_cm.toFixed(5)} cm`],
      ]);
      return;
    }
    this.skeleton.colour(a.values, this.errorCurve.threshold_cm);
    this.errorRows = rows([
      ['this frame, worst', `${worst.toFixed(5)} cm`],
      ['bone', escapeHtml(this.meta.bones[bone] ?? '')],
      ['threshold', `${this.errorCurve.threshold_cm} cm`],
      ['clip, worst', `${this.errorCurve.max_cm.toFixed(5)} cm`],
      ['at', `${this.errorCurve.worst_time.toFixed(3)} s`],
    ]);
  }

  async pollResidency() {
    try {
      this.state.residency = await fetchJson('/api/residency');
      const r = this.state.residency;
      const mib = (b) => (b / 1048576).toFixed(2);
      this.residencyRows = rows([
        ['resident', `${mib(r.resident_bytes)} / ${mib(r.budget_bytes)} MiB`],
        ['peak', `${mib(r.peak_resident_bytes)} MiB`],
        ['pages r / l / e', `${count(r.pages, 'r')} / ${count(r.pages, 'l')} / ${count(r.pages, 'e')}`],
        ['page loads (prefetch)', `${r.page_loads} (${r.prefetch_loads})`],
        ['stalls', `${r.stalls} (${r.stall_ms.toFixed(1)} ms)`],
        ['preview frames', r.preview_frames],
        ['not-ready frames', r.not_ready_frames],
        ['cuts crossed', r.cuts_crossed],
      ]);
    } catch (e) {
      this.state.lastError = String(e);
    }
  }

  render(now) {
    const s = this.state;
    const started = performance.now();
    const camera = s.view === 'file' && this.cameraBone >= 0 ? this.fileCamera : this.orbit;
    this.renderer.render(this.scene, camera);
    const drawn = performance.now();
    // The 2D panels are drawn again only when what they show moved by a
    // pixel: each redraw is a canvas to raster and composite again, which a
    // software compositor pays for in dropped display frames.
    const c = $('timeline'), d = this.meta.duration || 1;
    const px = (t) => Math.round((t / d) * c.width * 2);
    const r = s.residency;
    const timeline = `${c.width}x${c.height} ${px(s.time)} ${s.previewTimes.length} ${r ? `${px(r.window[0])} ${px(r.window[1])} ${r.pages}` : ''}`;
    if (timeline !== this.timelineDrawn) { this.timelineDrawn = timeline; this.drawTimeline(); }
    const floats = `${$('floats').width} ${Math.round((s.time / d) * $('floats').width * 2)}`;
    if (floats !== this.floatsDrawn) { this.floatsDrawn = floats; this.drawFloatPlayhead(); }
    s.renderMs = drawn - started;
    // Text and tables relayout the page: at their own, lower pace.
    if (now - this.panelsAt >= PANEL_MS) {
      this.panelsAt = now;
      this.drawPanels();
    }
    s.panelsMs = performance.now() - drawn;
  }

  drawPanels() {
    const s = this.state;
    const ft = [...s.frameTimes].sort((a, b) => a - b);
    const p50 = percentile(ft, 0.5), p99 = percentile(ft, 0.99);
    if (document.activeElement !== $('jump')) $('jump').value = s.time.toFixed(3);
    $('clock').textContent = `${s.time.toFixed(3)} / ${this.meta.duration.toFixed(3)} s`;
    $('hud').textContent = [
      `${s.quality}${s.poseReady ? '' : ' (not ready: last pose held)'}`,
      p50 === null ? '' : `frame p50 ${p50.toFixed(1)} ms  p99 ${p99.toFixed(1)} ms`,
    ].join('\n');
    if (this.residencyRows) { $('residency').innerHTML = this.residencyRows; this.residencyRows = null; }
    if (this.errorRows) { $('error').innerHTML = this.errorRows; this.errorRows = null; }
  }

  drawTimeline() {
    const c = $('timeline'), g = c.getContext('2d');
    const w = c.width, h = c.height, d = this.meta.duration || 1;
    const x = (t) => (t / d) * w;
    g.fillStyle = '#101216'; g.fillRect(0, 0, w, h);
    const residencyRow = [4, 22];
    const errorRow = this.errorCurve ? [28, h - 18] : [28, 28];
    this.rows = { residency: residencyRow, error: errorRow };
    const r = this.state.residency;
    if (r) {
      g.fillStyle = 'rgba(76,194,255,0.18)';
      g.fillRect(x(r.window[0]), 0, Math.max(1, x(r.window[1]) - x(r.window[0])), residencyRow[1] + 2);
      const fill = { r: COLORS.resident, l: COLORS.loading, e: COLORS.evicted, c: COLORS.corrupt, '-': COLORS.never };
      this.meta.pages.forEach((p, i) => {
        g.fillStyle = fill[r.pages[i]] || COLORS.never;
        g.fillRect(x(p.start), residencyRow[0], Math.max(1, x(p.end) - x(p.start) - 0.5), residencyRow[1] - residencyRow[0]);
      });
    }
    if (this.errorCurve) {
      const [top, bottom] = errorRow;
      const scale = Math.max(this.errorCurve.max_cm, this.errorCurve.threshold_cm) * 1.1 || 1;
      const y = (e) => bottom - (e / scale) * (bottom - top);
      g.strokeStyle = '#f85149'; g.setLineDash([4, 3]);
      g.beginPath(); g.moveTo(0, y(this.errorCurve.threshold_cm)); g.lineTo(w, y(this.errorCurve.threshold_cm)); g.stroke();
      g.setLineDash([]);
      g.strokeStyle = '#d29922'; g.beginPath();
      this.errorCurve.points.forEach(([t, e], i) => (i ? g.lineTo(x(t), y(e)) : g.moveTo(x(t), y(e))));
      g.stroke();
      g.fillStyle = '#8a909c'; g.font = '10px monospace';
      g.fillText(`worst error ${this.errorCurve.max_cm.toFixed(4)} cm, threshold ${this.errorCurve.threshold_cm} cm`, 4, top + 10);
    }
    g.strokeStyle = '#bc8cff';
    for (const t of this.meta.cuts) { g.beginPath(); g.moveTo(x(t), 0); g.lineTo(x(t), h); g.stroke(); }
    g.fillStyle = '#ff7b72';
    // Whole pixels, clear of the labels below: a mark reads as a mark.
    for (const t of this.state.previewTimes.slice(-2000)) g.fillRect(Math.floor(x(t)), h - 17, 2, 6);
    g.fillStyle = '#8a909c'; g.font = '10px monospace';
    g.fillText('0 s', 2, h - 2);
    g.fillText(`${d.toFixed(2)} s`, w - 60, h - 2);
    g.strokeStyle = '#ffffff'; g.lineWidth = 2;
    g.beginPath(); g.moveTo(x(this.state.time), 0); g.lineTo(x(this.state.time), h); g.stroke();
    g.lineWidth = 1;
  }

  drawFloats() {
    const c = $('floats'), g = c.getContext('2d');
    const { times, values } = this.floatCurves;
    g.fillStyle = '#101216'; g.fillRect(0, 0, c.width, c.height);
    if (!times.length) { g.fillStyle = '#8a909c'; g.fillText('no float tracks', 6, 14); return; }
    const d = this.meta.duration || 1;
    const legend = [];
    const n = values[0].length;
    for (let k = 0; k < n; k++) {
      let lo = Infinity, hi = -Infinity;
      for (const row of values) { lo = Math.min(lo, row[k]); hi = Math.max(hi, row[k]); }
      const span = hi - lo || 1;
      const hue = (k * 67) % 360;
      g.strokeStyle = `hsl(${hue} 70% 60%)`;
      g.beginPath();
      values.forEach((row, i) => {
        const px = (times[i] / d) * c.width, py = c.height - 4 - ((row[k] - lo) / span) * (c.height - 8);
        i ? g.lineTo(px, py) : g.moveTo(px, py);
      });
      g.stroke();
      legend.push([hue, k]);
    }
    this.floatBackground = g.getImageData(0, 0, c.width, c.height);
    $('float-legend').innerHTML = this.meta.floats.map((f) =>
      `<div><i style="background:hsl(${(f.offset * 67) % 360} 70% 60%)"></i>${escapeHtml(f.name)} (${escapeHtml(f.kind)})</div>`).join('');
  }

  drawFloatPlayhead() {
    if (!this.floatBackground) return;
    const c = $('floats'), g = c.getContext('2d');
    g.putImageData(this.floatBackground, 0, 0);
    const px = (this.state.time / (this.meta.duration || 1)) * c.width;
    g.strokeStyle = '#ffffff'; g.beginPath(); g.moveTo(px, 0); g.lineTo(px, c.height); g.stroke();
  }

  drawInspect() {
    const m = this.meta, i = m.inspect, sizes = i.sizes;
    const kib = (b) => `${(b / 1024).toFixed(1)} KiB`;
    $('title').textContent = m.title;
    $('subtitle').textContent = `'${m.name}', ${m.bones.length} bones, ${m.actors.length} actor(s), ` +
      `${m.samples} samples at ${m.sample_rate} Hz, ${m.pages.length} pages, budget ` +
      `${(m.budget_bytes / 1048576).toFixed(2)} MiB, missing page: ${m.missing_page}`;
    $('inspect').innerHTML = rows([
      ['ratio', `${(m.raw_bytes / sizes.file_bytes).toFixed(2)} : 1`],
      ['file', kib(sizes.file_bytes)],
      ['metadata', kib(sizes.metadata_bytes)],
      ['index', kib(sizes.index_bytes)],
      ['preview tier', kib(sizes.preview_bytes)],
      ['pages (stored)', kib(sizes.page_stored_bytes)],
      ['keys', kib(sizes.key_bytes)],
      ['segment headers', kib(sizes.segment_header_bytes)],
      ['float tracks', kib(sizes.float_bytes)],
      ['preview bound', m.preview ? `${m.preview.bound_cm.toFixed(3)} cm` : 'no tier'],
      ['threshold', `${m.threshold_cm} cm`],
    ]);
  }

  drawHistogram() {
    const c = $('histogram'), g = c.getContext('2d');
    const rates = this.meta.inspect.bit_rates;
    const hist = rates.all.histogram, bits = rates.bits;
    g.fillStyle = '#101216'; g.fillRect(0, 0, c.width, c.height);
    const most = Math.max(1, ...hist);
    const bw = c.width / hist.length;
    hist.forEach((n, k) => {
      const bh = (n / most) * (c.height - 14);
      g.fillStyle = '#4cc2ff'; g.fillRect(k * bw + 1, c.height - 12 - bh, bw - 2, bh);
      g.fillStyle = '#8a909c'; g.font = '9px monospace'; g.fillText(String(bits[k]), k * bw + 2, c.height - 2);
    });
  }
}

function rows(pairs) {
  return pairs.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('');
}

function count(text, letter) {
  let n = 0;
  for (const c of text) if (c === letter) n++;
  return n;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function main() {
  const meta = await fetchJson('/api/meta');
  const floatCurves = await fetchJson('/api/float-curves');
  const errorCurve = meta.against ? await fetchJson('/api/error-curve') : null;
  const viewer = new Viewer(meta, floatCurves, errorCurve);
  window.viewer = viewer;
  viewer.seek(0);
  const loop = (now) => {
    viewer.tick(now);
    viewer.render(now);
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  const poll = async () => {
    await viewer.pollResidency();
    setTimeout(poll, 100);
  };
  poll();
  // Resolved once the first pose is drawn.
  await new Promise((resolve) => {
    const wait = () => (viewer.state.frames > 0 ? resolve() : setTimeout(wait, 10));
    wait();
  });
  viewer.state.ready = true;
}

main().catch((e) => {
  console.error(e);
  document.body.insertAdjacentHTML('afterbegin', `<pre style="color:#f85149">${escapeHtml(e)}</pre>`);
});
