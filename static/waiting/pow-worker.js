// The waiting page's proof-of-work solver, run in a Web Worker so that the
// page stays responsive. Given {seed, bits} it finds a decimal nonce such that
// SHA-256(seed bytes || ASCII nonce) starts with `bits` zero bits (the
// contract in docs/endpoints.md, "What fans, apps and origins see"), posting
// {tries, expected} now and then and {nonce, tries, ms} at the end.
//
// SHA-256 is written out here (FIPS 180-4) rather than taken from
// crypto.subtle, whose every digest is a promise: a round trip per try would
// make a phone pay several times more than it needs to. The seed and a nonce
// of up to 17 digits fit in one 64-byte block, so each try is one
// compression of one block.
"use strict";

var K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
]);

// The padded block (bytes) and its message schedule.
var block = new Uint8Array(64);
var W = new Int32Array(64);

function decodeSeed(s) {
  var b64 = s.replace(/-/g, "+").replace(/_/g, "/");
  while (b64.length % 4) { b64 += "="; }
  var bin = atob(b64);
  var out = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) { out[i] = bin.charCodeAt(i); }
  return out;
}

// The state after the rounds that read only words of the seed: the seed's
// first whole words are the same in every try, so those rounds are run once
// (mid) and each try starts from round `fixed`.
var mid = new Int32Array(8);
var fixed = 0;
var IV = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

function loadWords() {
  for (var i = 0; i < 16; i++) {
    W[i] = (block[4 * i] << 24) | (block[4 * i + 1] << 16) | (block[4 * i + 2] << 8) | block[4 * i + 3];
  }
}

// rounds runs rounds [from, to) from state s (a..h) into s.
function rounds(s, from, to) {
  var a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
  for (var i = from; i < to; i++) {
    var S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    var ch = (e & f) ^ (~e & g);
    var t1 = (h + S1 + ch + K[i] + W[i]) | 0;
    var S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    var maj = (a & b) ^ (a & c) ^ (b & c);
    h = g; g = f; f = e; e = (d + t1) | 0;
    d = c; c = b; b = a; a = (t1 + S0 + maj) | 0;
  }
  s[0] = a; s[1] = b; s[2] = c; s[3] = d; s[4] = e; s[5] = f; s[6] = g; s[7] = h;
}

var state = new Int32Array(8);

// digestWords hashes the block and returns the digest's first 32 bits in
// h0 and the next 32 in h1.
var h0 = 0, h1 = 0;
function digestWords() {
  loadWords();
  for (var i = 16; i < 64; i++) {
    var w15 = W[i - 15], w2 = W[i - 2];
    var s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    var s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  state.set(mid);
  rounds(state, fixed, 64);
  h0 = (state[0] + IV[0]) | 0;
  h1 = (state[1] + IV[1]) | 0;
}

// zeroBits reports whether the digest starts with n zero bits.
function zeroBits(n) {
  if (n <= 32) { return n === 0 || (h0 >>> (32 - n)) === 0; }
  return h0 === 0 && (n === 64 || (h1 >>> (64 - n)) === 0);
}

// layout writes seed, nonce and padding into the block for a nonce of
// `digits` digits, and runs the rounds the seed alone decides.
function layout(seed, digits) {
  var n = seed.length + digits;
  if (n > 55) { throw new Error("seed and nonce do not fit one block"); }
  block.fill(0);
  block.set(seed, 0);
  block[n] = 0x80;
  block[62] = (n * 8) >>> 8;
  block[63] = (n * 8) & 0xff;
  loadWords();
  fixed = Math.floor(seed.length / 4);
  mid.set(IV);
  rounds(mid, 0, fixed);
}

function solve(seedText, bits) {
  var seed = decodeSeed(seedText);
  var digits = [0]; // the nonce, most significant digit first
  var expected = Math.pow(2, bits);
  var started = Date.now();
  var tries = 0;
  layout(seed, 1);
  for (;;) {
    for (var i = 0; i < digits.length; i++) { block[seed.length + i] = 48 + digits[i]; }
    digestWords();
    tries++;
    if (zeroBits(bits)) {
      return { nonce: digits.join(""), tries: tries, ms: Date.now() - started };
    }
    if ((tries & 0xffff) === 0) { self.postMessage({ tries: tries, expected: expected }); }
    // Count up in decimal, growing a digit when every one was 9.
    for (i = digits.length - 1; i >= 0 && digits[i] === 9; i--) { digits[i] = 0; }
    if (i < 0) { digits.unshift(1); layout(seed, digits.length); } else { digits[i]++; }
  }
}

self.onmessage = function (ev) {
  try {
    self.postMessage(solve(String(ev.data.seed), ev.data.bits | 0));
  } catch (e) {
    self.postMessage({ error: String(e && e.message || e) });
  }
};
