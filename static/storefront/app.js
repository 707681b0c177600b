// Foyer storefront: one page that routes itself by URL.
//   /              events on sale
//   /events/{id}   seat map, best available, standing zones, the hold
//   /orders/{id}   payment status and tickets, while the fan's visit lasts
//   /tickets/{link} the same from the order's signed link, which needs no
//                   admission pass: the buyer's way back after the visit ends
// It talks only to the booking API on the same origin, and keeps nothing
// secret: the fan is identified by the admission pass the gateway adds.
"use strict";

const MAX_SEATS = 4;
// Seat cells are drawn one SVG unit to a CSS pixel and never scaled down, so
// every seat is a 24 px target to touch; a map wider than the screen scrolls.
const SEAT = 24;
const GAP = 4;
const view = document.getElementById("view");
const notice = document.getElementById("notice");
// The page's language and its messages, as the server chose them
// (Accept-Language, the menu, its cookie).
const LANG = document.documentElement.lang || "en";
const MESSAGES = JSON.parse((document.getElementById("messages") || {}).textContent || "{}");
const plurals = new Intl.PluralRules(LANG);
const numbers = new Intl.NumberFormat(LANG);

// t is the message key with each {name} filled from vars.
function t(key, vars = {}) {
  let text = MESSAGES[key];
  if (typeof text !== "string") text = (text && text.other) || key;
  return fill(text, vars);
}

// tn is the plural message key about n: the form CLDR's rules pick for the
// page's language, {n} in its digits.
function tn(key, n, vars = {}) {
  const m = MESSAGES[key] || {};
  const text = typeof m === "string" ? m : m[plurals.select(n)] || m.other || key;
  return fill(text, { ...vars, n: numbers.format(n) });
}

function fill(text, vars) {
  return text.replace(/\{([a-z_]+)\}/g, (all, name) => (name in vars ? String(vars[name]) : all));
}

// ---------- small helpers ----------

function el(tag, attrs = {}, ...children) {
  const svg = ["svg", "g", "rect", "text", "title", "path"].includes(tag);
  const n = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v == null) continue;
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else if (k === "text") n.textContent = v;
    else n.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c != null) n.append(c);
  return n;
}

function money(amount, currency) {
  const n = Number(amount);
  try { return new Intl.NumberFormat(LANG, { style: "currency", currency: currency || "EUR" }).format(n); }
  catch { return amount + " " + (currency || ""); }
}

function when(iso) {
  return new Date(iso).toLocaleString(LANG, { weekday: "short", day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit" });
}

function say(message, kind) {
  if (!message) { notice.hidden = true; notice.textContent = ""; return; }
  notice.className = "notice" + (kind === "info" ? " info" : "");
  notice.textContent = message;
  notice.hidden = false;
}

// render shows nodes in the view; null and undefined stand for "nothing here"
// (replaceChildren would print them as text).
function render(...nodes) {
  view.replaceChildren(...nodes.flat().filter((n) => n != null));
  view.setAttribute("aria-busy", "false");
}

function seatLabel(id) {
  const [section, row, number] = id.split("-");
  return t("seat.label", { section, row: numbers.format(Number(row)), seat: numbers.format(Number(number)) });
}

// ---------- the API ----------

class APIError extends Error {
  constructor(status, body) {
    super((body && body.message) || t("error.server", { status }));
    this.status = status;
    this.code = body && body.error;
    this.seats = (body && body.seats) || [];
  }
}

let triedDevPass = false;

// api sends one request. POSTs carry an Idempotency-Key, so a retry after a
// timeout or a 503 can never hold or check out twice.
async function api(method, path, body, key) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (method === "POST") headers["Idempotency-Key"] = key || crypto.randomUUID();
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
    const data = await res.json().catch(() => null);
    if (res.ok) return { data, command: res.headers.get("X-Waiting-Room-Command") };
    if (res.status === 401 && !triedDevPass) {
      // Standalone demo only: the service hands out passes itself. Behind the
      // waiting room this endpoint does not exist and the fan is sent back.
      triedDevPass = true;
      const dev = await fetch("/dev/pass", { method: "POST", credentials: "same-origin" });
      if (dev.ok) continue;
    }
    if (res.status === 503 && attempt < 3) {
      const wait = Math.min(Number(res.headers.get("Retry-After")) || 1, 5);
      await new Promise((r) => setTimeout(r, wait * 1000));
      continue;
    }
    throw new APIError(res.status, data);
  }
}

function explain(err) {
  if (err.status === 401) return t("error.visit_ended");
  if (err.code === "invalid_order_link") return t("error.bad_link");
  return t("error.generic");
}

// ---------- routing ----------

let stopTimers = () => {};

let first = true;

function route() {
  const path = location.pathname;
  // A hold and a refusal are the server's pages, forms and all.
  if (first && /^(hold|error)$/.test(view.dataset.view || "")) return;
  stopTimers();
  // The server's page stays until the script has its own; later routes
  // say they are loading.
  if (!first) {
    say("");
    view.replaceChildren(el("p", { class: "loading", text: t("js.loading") }));
    view.setAttribute("aria-busy", "true");
  }
  first = false;
  let m;
  if ((m = path.match(/^\/events\/(\d+)$/))) return showEvent(Number(m[1]));
  if ((m = path.match(/^\/orders\/([a-z0-9_]+)$/))) return showOrder(`/api/orders/${m[1]}`, m[1]);
  if ((m = path.match(/^\/tickets\/([A-Za-z0-9_.-]+)$/))) return showOrder(`/api/tickets/${m[1]}`, m[1].split(".")[0]);
  return showEvents();
}

window.addEventListener("popstate", route);
document.addEventListener("click", (e) => {
  const a = e.target.closest && e.target.closest("a[data-nav]");
  if (!a || e.metaKey || e.ctrlKey) return;
  e.preventDefault();
  history.pushState(null, "", a.getAttribute("href"));
  route();
  document.getElementById("main").focus();
});

// ---------- events ----------

async function showEvents() {
  document.title = t("site.name");
  try {
    const { data } = await api("GET", "/api/events");
    if (!data.events.length) return render(el("h1", { text: t("events.none") }), el("p", { class: "sub", text: t("events.none_lead") }));
    render(
      el("h1", { text: t("events.title") }),
      el("p", { class: "sub", text: t("events.lead") }),
      el("div", { class: "grid" }, data.events.map(eventCard)),
    );
  } catch (err) {
    render(el("h1", { text: t("events.title") }));
    say(explain(err));
  }
}

function eventCard(e) {
  const prices = [...e.sections, ...e.zones].map((p) => Number(p.price));
  const from = prices.length ? money(Math.min(...prices), e.currency) : "";
  return el("article", { class: "card" },
    el("h2", {}, el("a", { href: `/events/${e.id}`, "data-nav": true, text: e.name })),
    el("p", { class: "sub", text: when(e.starts_at) }),
    el("p", {},
      e.sold_out ? el("span", { class: "pill out", text: t("events.sold_out") }) : el("span", { class: "pill", text: tn("events.left", e.available, { price: from }) })),
  );
}

// ---------- one event ----------

function holdKey(eventID) { return `foyer.hold.${eventID}`; }

async function showEvent(id) {
  let event;
  try {
    ({ data: event } = await api("GET", `/api/events/${id}`));
  } catch (err) {
    render(el("p", {}, el("a", { href: "/", "data-nav": true, text: t("event.all") })));
    return say(explain(err));
  }
  document.title = `${event.name} — ${t("site.name")}`;
  const state = { event, map: null, selected: new Set(), hold: null };
  const mapBox = el("div", { class: "card map" }, el("p", { class: "loading", text: t("js.loading") }));
  const side = el("div", { class: "side" });
  render(
    el("p", {}, el("a", { href: "/", "data-nav": true, text: t("event.all") })),
    el("h1", { text: event.name }),
    el("p", { class: "sub", text: when(event.starts_at) }),
    el("div", { class: "layout" }, el("section", { "aria-label": t("event.map") }, mapBox), side),
  );

  const saved = sessionStorage.getItem(holdKey(id));
  if (saved) {
    try {
      const { data } = await api("GET", `/api/holds/${saved}`);
      if (data.status === "active" && new Date(data.expires_at) > new Date()) state.hold = data;
      else sessionStorage.removeItem(holdKey(id));
    } catch { sessionStorage.removeItem(holdKey(id)); }
  }

  const refresh = async () => {
    try {
      const { data, command } = await api("GET", `/api/events/${id}/seats`);
      state.map = data;
      if (command === "sold-out" || data.available === 0 && data.held === 0) say(t("event.sold_out"), "info");
      // Redrawn only when a seat changed: a redraw replaces every seat, and
      // a tap whose seat is replaced between touch and lift is lost.
      const drawn = JSON.stringify([data.sections, data.zones, state.hold && state.hold.seats]);
      if (drawn !== state.mapDrawn) {
        state.mapDrawn = drawn;
        drawMap(state, mapBox, () => drawSide(state, side, refresh));
      }
      drawSide(state, side, refresh);
    } catch (err) { say(explain(err)); }
  };
  await refresh();
  const poll = setInterval(refresh, 3000);
  const tick = setInterval(() => drawCountdown(state, refresh), 1000);
  stopTimers = () => { clearInterval(poll); clearInterval(tick); };
}

// drawMap draws the seats as an ARIA grid: one Tab stop (roving tabindex),
// the arrow keys move from seat to seat and row to row, Home and End go to
// a row's ends, Space or Enter picks a free seat. The next Tab reaches
// "Hold".
function drawMap(state, box, onChange) {
  const m = state.map;
  const mine = new Set(state.hold ? state.hold.seats || [] : []);
  const widest = Math.max(10, ...m.sections.map((s) => s.seats_per_row));
  const width = 40 + widest * (SEAT + GAP);
  const svg = el("svg", { viewBox: `0 0 ${width} 0`, width, role: "grid", "aria-label": t("map.label") });
  let y = 0;
  svg.append(el("rect", { class: "stage", x: width / 2 - 120, y, width: 240, height: 26, rx: 6, "aria-hidden": "true" }),
    el("text", { class: "stage-label", x: width / 2, y: y + 17, "text-anchor": "middle", text: t("map.stage"), "aria-hidden": "true" }));
  y += 46;
  const rows = []; // each a list of seat cells, in the order drawn
  for (const s of m.sections) {
    const label = t("event.section_price", { section: s.id, price: money(s.price, state.event.currency) });
    svg.append(el("text", { class: "section-label", x: width / 2, y, "text-anchor": "middle", text: label, "aria-hidden": "true" }));
    const g = el("g", { role: "rowgroup", "aria-label": label });
    y += 12;
    const left = (width - s.seats_per_row * (SEAT + GAP)) / 2;
    s.rows.forEach((codes, r) => {
      svg.append(el("text", { class: "row-label", x: left - 6, y: y + SEAT / 2 + 4, "text-anchor": "end", text: numbers.format(r + 1), "aria-hidden": "true" }));
      const row = el("g", { role: "row" });
      const cells = [];
      for (let n = 0; n < codes.length; n++) {
        const id = `${s.id}-${r + 1}-${n + 1}`;
        const free = codes[n] === "a" && !state.hold;
        const cls = mine.has(id) ? "mine" : state.selected.has(id) ? "sel" : codes[n];
        const status = mine.has(id) ? t("seat.mine") : codes[n] === "a" ? (state.selected.has(id) ? t("seat.selected") : t("seat.available")) : codes[n] === "h" ? t("seat.held") : t("seat.sold");
        const x = left + n * (SEAT + GAP);
        const seat = el("rect", {
          class: `seat ${cls}`, x, y, width: SEAT, height: SEAT, rx: 4, role: "gridcell",
          "aria-selected": free ? String(state.selected.has(id)) : null,
          "aria-disabled": free ? null : "true",
          "aria-label": `${seatLabel(id)}, ${status}`,
          tabindex: "-1", "data-seat": id,
        }, el("title", { text: `${seatLabel(id)} — ${status}` }));
        if (free) {
          const toggle = () => {
            if (state.selected.has(id)) state.selected.delete(id);
            else if (state.selected.size >= MAX_SEATS) return say(tn("pick.max", MAX_SEATS), "info");
            else state.selected.add(id);
            say("");
            seat.setAttribute("class", `seat ${state.selected.has(id) ? "sel" : "a"}`);
            seat.setAttribute("aria-selected", String(state.selected.has(id)));
            seat.setAttribute("aria-label", `${seatLabel(id)}, ${state.selected.has(id) ? t("seat.selected") : t("seat.available")}`);
            onChange();
          };
          seat.addEventListener("click", () => { focusSeat(seat); toggle(); });
          seat.addEventListener("keydown", (e) => { if (e.key === " " || e.key === "Enter") { e.preventDefault(); toggle(); } });
        }
        // A tick marks picked seats and the fan's own, not colour alone.
        row.append(seat, el("path", { class: "tick", d: `M${x + 6} ${y + 12.5}l4 4l8-8.5`, "aria-hidden": "true" }));
        cells.push(seat);
      }
      g.append(row);
      rows.push(cells);
      y += SEAT + GAP;
    });
    svg.append(g);
    y += 24;
  }
  svg.setAttribute("viewBox", `0 0 ${width} ${Math.max(y, 60)}`);
  svg.setAttribute("height", Math.max(y, 60));
  // Arrow keys move by one seat (the map is drawn left to right in every
  // language), up and down to the same place in the next row.
  svg.addEventListener("keydown", (e) => {
    const cur = e.target.closest && e.target.closest("rect[data-seat]");
    if (!cur) return;
    let r = rows.findIndex((cells) => cells.includes(cur));
    let c = rows[r].indexOf(cur);
    switch (e.key) {
      case "ArrowRight": c = Math.min(c + 1, rows[r].length - 1); break;
      case "ArrowLeft": c = Math.max(c - 1, 0); break;
      case "ArrowDown": r = Math.min(r + 1, rows.length - 1); break;
      case "ArrowUp": r = Math.max(r - 1, 0); break;
      case "Home": c = 0; break;
      case "End": c = rows[r].length - 1; break;
      default: return;
    }
    e.preventDefault();
    focusSeat(rows[r][Math.min(c, rows[r].length - 1)], true);
  });
  const legend = el("ul", { class: "legend", "aria-label": t("legend.title") },
    el("li", {}, el("i", { class: "a" }), t("legend.available")), el("li", {}, el("i", { class: "sel" }), t("legend.yours")),
    el("li", {}, el("i", { class: "h" }), t("legend.held")), el("li", {}, el("i", { class: "s" }), t("legend.sold")));
  // Keep keyboard focus on the same seat across redraws.
  const focusedID = document.activeElement && box.contains(document.activeElement) ? document.activeElement.getAttribute("data-seat") : null;
  const before = box.querySelector(".seat-scroll");
  const scrolled = before ? before.scrollLeft : null;
  const lastStop = before && before.querySelector('rect[tabindex="0"]');
  // The map scrolls sideways on a narrow screen, inside its own box; the
  // grid's one focusable seat makes the box reachable by keyboard.
  const scroller = el("div", { class: "seat-scroll" }, svg);
  box.replaceChildren(m.sections.length ? scroller : el("p", { class: "sub", text: t("event.standing_only") }), legend);
  const all = rows.flat();
  const stop = (lastStop && all.find((r) => r.dataset.seat === lastStop.dataset.seat)) ||
    all.find((r) => r.getAttribute("aria-selected") === "false") || all[0];
  if (stop) stop.setAttribute("tabindex", "0");
  // A redraw keeps the fan where they scrolled; the first one opens on the
  // middle of the map: the stage and the section labels.
  const centre = () => { scroller.scrollLeft = (scroller.scrollWidth - scroller.clientWidth) / 2; };
  if (scrolled != null) scroller.scrollLeft = scrolled;
  else { centre(); requestAnimationFrame(centre); }
  if (focusedID) {
    const again = all.find((r) => r.dataset.seat === focusedID);
    if (again) focusSeat(again);
  }
}

// focusSeat makes seat the grid's one Tab stop and focuses it.
function focusSeat(seat, scroll) {
  const grid = seat.closest("svg");
  for (const r of grid.querySelectorAll('rect[tabindex="0"]')) r.setAttribute("tabindex", "-1");
  seat.setAttribute("tabindex", "0");
  seat.focus({ preventScroll: !scroll });
  if (scroll) seat.scrollIntoView({ block: "nearest", inline: "nearest" });
}

function drawSide(state, side, refresh) {
  const { event, map } = state;
  const cur = event.currency;
  if (state.hold) return side.replaceChildren(holdPanel(state, refresh));
  const parts = [];

  const picked = [...state.selected].sort();
  const pickedTotal = picked.reduce((t, id) => t + Number((map.sections.find((s) => s.id === id.split("-")[0]) || {}).price || 0), 0);
  parts.push(el("section", { class: "card", "aria-labelledby": "pick-h" },
    el("h2", { id: "pick-h", text: t("pick.title") }),
    picked.length
      ? el("ul", { class: "seats-list" }, picked.map((id) => el("li", { text: seatLabel(id) })))
      : el("p", { class: "sub", text: t("pick.help") }),
    picked.length ? el("p", { class: "total", text: t("pick.total", { price: money(pickedTotal, cur) }) }) : null,
    el("button", { disabled: !picked.length, onclick: () => hold(state, { seats: picked }, refresh) }, picked.length ? tn("pick.hold", picked.length) : t("pick.hold_none")),
  ));

  if (map.sections.length) {
    const sec = el("select", { id: "ba-section" }, map.sections.map((s) => el("option", { value: s.id, disabled: s.available === 0, text: t("event.section_price", { section: s.id, price: money(s.price, cur) }) + (s.available === 0 ? " · " + t("events.sold_out") : "") })));
    const qty = quantitySelect("ba-qty");
    parts.push(el("section", { class: "card", "aria-labelledby": "ba-h" },
      el("h2", { id: "ba-h", text: t("best.title") }),
      el("div", { class: "form-row" }, el("label", { for: "ba-section", text: t("field.section") }), sec),
      el("div", { class: "form-row" }, el("label", { for: "ba-qty", text: t("field.quantity") }), qty),
      el("button", { class: "secondary", onclick: () => hold(state, { section: sec.value, quantity: Number(qty.value) }, refresh) }, t("best.submit")),
    ));
  }

  if (map.zones.length) {
    parts.push(el("section", { class: "card", "aria-labelledby": "ga-h" },
      el("h2", { id: "ga-h", text: t("ga.title") }),
      el("div", { class: "zones" }, map.zones.map((z) => {
        const qty = quantitySelect(`ga-${z.id}`);
        return el("div", { class: "zone" },
          el("div", {}, el("strong", { text: z.id }), el("div", { class: "sub", text: `${money(z.price, cur)} · ${z.available ? tn("ga.left", z.available) : t("events.sold_out")}` })),
          el("div", { class: "form-row" }, el("label", { for: `ga-${z.id}`, class: "sr-only", text: t("ga.places", { zone: z.id }) }), qty,
            el("button", { class: "secondary", disabled: !z.available, onclick: () => hold(state, { zone: z.id, quantity: Number(qty.value) }, refresh) }, t("ga.submit"))));
      })),
    ));
  }
  side.replaceChildren(...parts);
}

function quantitySelect(id) {
  return el("select", { id }, [1, 2, 3, 4].map((n) => el("option", { value: n, text: numbers.format(n) })));
}

async function hold(state, body, refresh) {
  say("");
  try {
    const { data } = await api("POST", `/api/events/${state.event.id}/holds`, body);
    state.hold = data;
    state.selected.clear();
    sessionStorage.setItem(holdKey(state.event.id), data.id);
    say(t("hold.held_notice", { what: describeHold(data) }), "info");
    await refresh();
  } catch (err) {
    if (err.code === "seat_unavailable" && err.seats.length) {
      err.seats.forEach((s) => state.selected.delete(s));
      say(t("hold.quicker", { seats: err.seats.map(seatLabel).join("; ") }));
    } else say(explain(err));
    await refresh();
  }
}

function describeHold(h) {
  if (h.zone) return tn("hold.standing", h.quantity, { zone: h.zone });
  return h.seats.map(seatLabel).join("; ");
}

function holdPanel(state, refresh) {
  const h = state.hold;
  const cd = el("p", { class: "countdown", id: "countdown", "aria-live": "off" });
  const warn = el("p", { class: "sr-only", id: "countdown-sr", "aria-live": "polite" });
  const pay = el("button", { onclick: () => checkout(state, pay) }, t("hold.checkout", { price: money(h.amount, state.event.currency) }));
  const panel = el("section", { class: "card hold", "aria-labelledby": "hold-h" },
    el("h2", { id: "hold-h", text: t("hold.title") }),
    h.zone ? el("p", { text: tn("hold.standing", h.quantity, { zone: h.zone }) }) : el("ul", { class: "seats-list" }, h.seats.map((s) => el("li", { text: seatLabel(s) }))),
    el("p", { class: "sub", text: t("hold.time_left") }), cd, warn,
    el("div", { class: "form-row" }, pay,
      el("button", { class: "secondary", onclick: () => release(state, refresh) }, t("hold.release"))),
  );
  queueMicrotask(() => drawCountdown(state, refresh));
  return panel;
}

function drawCountdown(state, refresh) {
  const cd = document.getElementById("countdown");
  if (!state.hold || !cd) return;
  const left = Math.max(0, Math.round((new Date(state.hold.expires_at) - Date.now()) / 1000));
  cd.textContent = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  cd.classList.toggle("low", left <= 60);
  const sr = document.getElementById("countdown-sr");
  if (sr && (left === 60 || left === 30 || left === 10)) sr.textContent = tn("hold.seconds_left", left);
  if (left === 0) {
    sessionStorage.removeItem(holdKey(state.event.id));
    state.hold = null;
    say(t("hold.expired"));
    refresh();
  }
}

async function release(state, refresh) {
  try {
    await api("DELETE", `/api/holds/${state.hold.id}`);
  } catch (err) { say(explain(err)); }
  sessionStorage.removeItem(holdKey(state.event.id));
  state.hold = null;
  say(t("hold.released"), "info");
  await refresh();
}

async function checkout(state, button) {
  button.disabled = true;
  button.textContent = t("hold.opening");
  try {
    const { data } = await api("POST", `/api/holds/${state.hold.id}/checkout`, undefined, `checkout-${state.hold.id}`);
    sessionStorage.removeItem(holdKey(state.event.id));
    location.assign(data.payment.pay_url);
  } catch (err) {
    button.disabled = false;
    button.textContent = t("hold.checkout", { price: money(state.hold.amount, state.event.currency) });
    say(explain(err));
  }
}

// ---------- an order ----------

function orderKey(id) { return `foyer.order.${id}`; }

// showOrder shows an order from source: /api/orders/{id} during the fan's
// visit, or the order's signed link (/api/tickets/{link}), which needs no
// pass. During the visit it asks with the pass until the order is settled:
// the answer that shows the tickets delivered also ends the visit, freeing
// the fan's slot. Then the page moves to the signed link, so that a reload or
// a bookmark finds the order again without queueing; the link is on the page
// from the first answer.
async function showOrder(source, id) {
  document.title = `${t("order.title")} — ${t("site.name")}`;
  let timer;
  let link = null;
  const load = async () => {
    let order;
    try {
      ({ data: order } = await api("GET", source));
      // Only an order has an id: anything else is the gateway answering for
      // a visit that has ended. The signed link still works.
      if (!order || !order.id) throw new APIError(401, null);
      localStorage.setItem(orderKey(id), JSON.stringify(order));
    } catch (err) {
      if (err.status === 401 && link) { source = `/api${link}`; timer = setTimeout(load, 0); return; }
      // A finished order ends the visit; the tickets shown last stay here.
      const cached = err.code !== "invalid_order_link" && localStorage.getItem(orderKey(id));
      if (cached) order = JSON.parse(cached);
      else { render(el("h1", { text: t("order.title") })); return say(explain(err)); }
    }
    link = order.link || link;
    drawOrder(order);
    const done = ["refunded", "payment_failed"].includes(order.status) || (order.status === "paid" && order.tickets.every((t) => t.delivery));
    if (done && link && location.pathname !== link) history.replaceState(null, "", link);
    if (!done) timer = setTimeout(load, 1500);
  };
  stopTimers = () => clearTimeout(timer);
  await load();
}

function drawOrder(o) {
  // A refund cancels the order's tickets: they admit nobody and are not shown.
  const tickets = o.tickets.filter((tk) => !tk.cancelled_at);
  const statusText = t(o.refund_reason === "returned" ? "order.returned" : `order.${o.status}`);
  const cls = o.status === "paid" ? "paid" : o.status === "pending_payment" ? "" : "refund";
  const done = ["refunded", "payment_failed"].includes(o.status) || (o.status === "paid" && o.tickets.every((tk) => tk.delivery));
  const [keepBefore, keepAfter] = t("order.keep").split("{link}");
  // Once the order is done the visit is over: the way back to the event
  // goes through the line again, and says so before the fan follows it.
  const back = done
    ? [el("p", {}, el("a", { href: `/events/${o.event_id}`, "aria-describedby": "back-note", text: t("order.back") })),
      el("p", { id: "back-note", class: "sub", text: t("order.back_note") })]
    : el("p", {}, el("a", { href: `/events/${o.event_id}`, "data-nav": true, text: t("order.back") }));
  render(
    back,
    el("h1", { text: t("order.title") }),
    el("p", { class: `status ${cls}`, text: statusText }),
    el("p", { class: "sub", text: t("order.summary", { id: o.id, price: money(o.amount, o.currency) }) }),
    o.link ? el("p", { class: "keep" }, keepBefore, el("a", { href: o.link, text: t("order.keep_link") }), keepAfter || "") : null,
    tickets.length ? el("h2", { text: tn("order.tickets", tickets.length) }) : null,
    el("div", { class: "tickets" }, tickets.map((tk) => el("article", { class: "ticket", "aria-label": tk.seat ? seatLabel(tk.seat) : t("order.standing", { zone: tk.zone }) },
      el("div", { class: "what", text: tk.seat ? seatLabel(tk.seat) : t("order.standing", { zone: tk.zone }) }),
      tk.delivery
        ? [el("p", { class: "sub", text: t("order.issued", { time: when(tk.delivery.delivered_at) }) }), el("code", { text: tk.delivery.code })]
        : el("p", { class: "sub", text: t("order.issuing") }),
    ))),
  );
}

route();
