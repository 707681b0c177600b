// The dashboard's live half. The figures arrive worded by the server, which
// rendered the same words into the page, so a fresh load and a live update
// always read alike; this script only puts them in place and draws the
// charts of the last hour from the samples. It loads nothing from anywhere.
"use strict";
(function () {
  var HOUR = 3600 * 1000;
  var SVG = "http://www.w3.org/2000/svg";
  var history = {}; // room -> samples, oldest first
  var rendered = Array.prototype.map.call(
    document.querySelectorAll("section.room"), function (s) { return s.dataset.room; });
  var conn = document.getElementById("conn");
  var asOf = document.getElementById("as-of");

  function setConn(text, cls) {
    conn.textContent = text;
    conn.className = cls;
  }

  function sameRooms(p) {
    if (p.rooms.length !== rendered.length) return false;
    for (var i = 0; i < p.rooms.length; i++) {
      if (p.rooms[i].room !== rendered[i]) return false;
    }
    return true;
  }

  function cells(room, key) {
    return document.querySelectorAll('[data-room="' + room + '"] [data-key="' + key + '"]');
  }

  function setFigures(r) {
    r.figures.concat(r.node_figures).forEach(function (f) {
      cells(r.room, f.key).forEach(function (el) {
        if (el.textContent !== f.text) el.textContent = f.text;
        if (f.key === "store") el.classList.toggle("bad", !r.store_healthy);
      });
    });
  }

  function apply(p, replace) {
    if (!sameRooms(p)) {
      // A room came or went (a config reload): the page is rendered anew.
      location.reload();
      return;
    }
    var at = new Date(p.at);
    asOf.dateTime = p.at;
    asOf.textContent = at.toLocaleTimeString();
    p.rooms.forEach(function (r) {
      var h = replace || !history[r.room] ? [] : history[r.room];
      var last = h.length ? h[h.length - 1].t : 0;
      r.history.forEach(function (s) { if (s.t > last) h.push(s); });
      var cut = 0;
      while (cut < h.length && h[cut].t < at.getTime() - HOUR) cut++;
      history[r.room] = h.slice(cut);
      setFigures(r);
      draw(r.room, history[r.room], at.getTime());
    });
  }

  function el(name, attrs, text) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmt(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (v >= 1e4) return Math.round(v / 1e3) + "k";
    if (v >= 100 || v === Math.round(v)) return String(Math.round(v));
    return v.toFixed(1);
  }

  function ago(ms) {
    var s = Math.round(ms / 1000);
    return s < 120 ? "-" + s + " s" : "-" + Math.round(s / 60) + " min";
  }

  // The series of each chart: [legend, class, value of a sample or null].
  var CHARTS = {
    line: [["waiting", "s1", function (s) { return s.waiting; }],
           ["active", "s2", function (s) { return s.active; }]],
    rate: [["admitted / min", "s1", function (s) { return s.admitted_per_min; }]],
    eta: [["minutes", "s1", function (s) { return s.eta < 0 ? null : s.eta / 60; }]],
    node: [["joins / s", "s1", function (s) { return s.joins_per_s; }],
           ["status answers / s", "s2", function (s) { return s.polls_per_s; }]]
  };

  function draw(room, samples, now) {
    var sec = document.querySelector('section.room[data-room="' + room + '"]');
    sec.querySelectorAll("figure[data-chart]").forEach(function (fig) {
      var spec = CHARTS[fig.dataset.chart];
      var box = fig.querySelector(".chart");
      var W = 320, H = 120, L = 38, R = 6, T = 6, B = 18;
      // The hour, or as much of it as the node has sampled (at least a
      // minute), so that a sale that just began is not a sliver at the edge.
      var x0 = now - HOUR;
      if (samples.length && samples[0].t > x0) x0 = Math.min(samples[0].t, now - 60000);
      var span = now - x0;
      var max = 0;
      spec.forEach(function (s) {
        samples.forEach(function (p) { var v = s[2](p); if (v !== null && v > max) max = v; });
      });
      max = max > 0 ? max * 1.1 : 1;
      var X = function (t) { return L + (W - L - R) * (t - x0) / span; };
      var Y = function (v) { return T + (H - T - B) * (1 - v / max); };
      var captionID = box.dataset.labelledby, descID = captionID + "-desc";
      var svg = el("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-labelledby": captionID + " " + descID });
      var latest = samples.length ? samples[samples.length - 1] : null;
      var words = spec.map(function (s) {
        var v = latest ? s[2](latest) : null;
        return s[0] + " " + (v === null ? "none" : fmt(v));
      });
      svg.appendChild(el("desc", { id: descID }, latest ? "Now: " + words.join(", ") + "." : "No samples yet."));
      svg.appendChild(el("line", { "class": "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
      svg.appendChild(el("line", { "class": "axis", x1: L, y1: T, x2: L, y2: H - B }));
      svg.appendChild(el("text", { x: L - 4, y: T + 9, "text-anchor": "end" }, fmt(max)));
      svg.appendChild(el("text", { x: L - 4, y: H - B, "text-anchor": "end" }, "0"));
      [[ago(span), x0], [ago(span / 2), x0 + span / 2], ["now", now]].forEach(function (tk, i) {
        svg.appendChild(el("text", { x: X(tk[1]), y: H - 4, "text-anchor": ["start", "middle", "end"][i] }, tk[0]));
      });
      spec.forEach(function (s) {
        // A gap (no value, or no sample for over half a minute) breaks the line.
        var d = "", prev = null;
        samples.forEach(function (p) {
          var v = s[2](p);
          if (v === null) { prev = null; return; }
          var cmd = prev === null || p.t - prev > 30000 ? "M" : "L";
          d += cmd + X(p.t).toFixed(1) + " " + Y(v).toFixed(1);
          prev = p.t;
        });
        if (d) svg.appendChild(el("path", { "class": s[1], d: d }));
      });
      box.replaceChildren(svg);
      var legend = fig.querySelector(".legend");
      if (!legend) {
        legend = document.createElement("p");
        legend.className = "legend";
        legend.setAttribute("aria-hidden", "true");
        spec.forEach(function (s) {
          var k = document.createElement("span");
          k.className = "k" + s[1].slice(1);
          k.textContent = s[0];
          legend.appendChild(k);
        });
        fig.appendChild(legend);
      }
    });
  }

  if (!window.EventSource) {
    setConn("This browser cannot follow live updates: reload for fresh figures.", "lost");
    return;
  }
  setConn("Connecting for live updates…", "");
  var src = new EventSource("?format=events");
  src.addEventListener("snapshot", function (e) {
    apply(JSON.parse(e.data), true);
    setConn("Live: updated every second.", "live");
  });
  src.addEventListener("update", function (e) { apply(JSON.parse(e.data), false); });
  src.onerror = function () {
    // EventSource reconnects by itself; say so while it does.
    setConn("Connection lost: reconnecting…", "lost");
  };
})();
