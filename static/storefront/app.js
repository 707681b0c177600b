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
  try { return new Intl.NumberFormat(undefined, { style: "currency", currency: currency || "EUR" }).format(n); }
  catch { return amount + " " + (currency || ""); }
}

function when(iso) {
  return new Date(iso).toLocaleString(undefined, { weekday: "short", day: "numeric", month: "long", year: "numeric", hour: "2-digit", minute: "2-digit" });
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
  return `Section ${section}, row ${row}, seat ${number}`;
}

// ---------- the API ----------

class APIError extends Error {
  constructor(status, body) {
    super((body && body.message) || `The server answered ${status}.`);
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
  if (err.status === 401) return "Your visit has ended. Go back through the waiting room to continue.";
  if (err.code === "invalid_order_link") return "This link does not open an order. Check that the whole link was copied.";
  return err.message || "Something went wrong. Please try again.";
}

// ---------- routing ----------

let stopTimers = () => {};

function route() {
  stopTimers();
  say("");
  view.replaceChildren(el("p", { class: "loading", text: "Loading…" }));
  view.setAttribute("aria-busy", "true");
  const path = location.pathname;
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
  document.title = "Foyer Tickets";
  try {
    const { data } = await api("GET", "/api/events");
    if (!data.events.length) return render(el("h1", { text: "No events on sale" }), el("p", { class: "sub", text: "Check back soon." }));
    render(
      el("h1", { text: "On sale now" }),
      el("p", { class: "sub", text: "Pick a night, then your seats." }),
      el("div", { class: "grid" }, data.events.map(eventCard)),
    );
  } catch (err) {
    render(el("h1", { text: "Events" }));
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
      e.sold_out ? el("span", { class: "pill out", text: "Sold out" }) : el("span", { class: "pill", text: `${e.available} left · from ${from}` })),
  );
}

// ---------- one event ----------

function holdKey(eventID) { return `foyer.hold.${eventID}`; }

async function showEvent(id) {
  let event;
  try {
    ({ data: event } = await api("GET", `/api/events/${id}`));
  } catch (err) {
    render(el("p", {}, el("a", { href: "/", "data-nav": true, text: "← All events" })));
    return say(explain(err));
  }
  document.title = `${event.name} — Foyer Tickets`;
  const state = { event, map: null, selected: new Set(), hold: null };
  const mapBox = el("div", { class: "card map" }, el("p", { class: "loading", text: "Loading the seat map…" }));
  const side = el("div", { class: "side" });
  render(
    el("p", {}, el("a", { href: "/", "data-nav": true, text: "← All events" })),
    el("h1", { text: event.name }),
    el("p", { class: "sub", text: when(event.starts_at) }),
    el("div", { class: "layout" }, el("section", { "aria-label": "Seat map" }, mapBox), side),
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
      if (command === "sold-out" || data.available === 0 && data.held === 0) say("This event is sold out.", "info");
      drawMap(state, mapBox, () => drawSide(state, side, refresh));
      drawSide(state, side, refresh);
    } catch (err) { say(explain(err)); }
  };
  await refresh();
  const poll = setInterval(refresh, 3000);
  const tick = setInterval(() => drawCountdown(state, refresh), 1000);
  stopTimers = () => { clearInterval(poll); clearInterval(tick); };
}

function drawMap(state, box, onChange) {
  const m = state.map;
  const mine = new Set(state.hold ? state.hold.seats || [] : []);
  const widest = Math.max(10, ...m.sections.map((s) => s.seats_per_row));
  const width = 40 + widest * (SEAT + GAP);
  const svg = el("svg", { viewBox: `0 0 ${width} 0`, width, role: "group", "aria-label": "Seats. Use Tab to move between free seats and Space to pick one." });
  let y = 0;
  svg.append(el("rect", { class: "stage", x: width / 2 - 120, y, width: 240, height: 26, rx: 6 }),
    el("text", { class: "stage-label", x: width / 2, y: y + 17, "text-anchor": "middle", text: "STAGE" }));
  y += 46;
  for (const s of m.sections) {
    const g = el("g", { role: "group", "aria-label": `Section ${s.id}, ${money(s.price, state.event.currency)} per seat, ${s.available} free` });
    g.append(el("text", { class: "section-label", x: width / 2, y, "text-anchor": "middle", text: `Section ${s.id} · ${money(s.price, state.event.currency)}` }));
    y += 12;
    const left = (width - s.seats_per_row * (SEAT + GAP)) / 2;
    s.rows.forEach((codes, r) => {
      g.append(el("text", { class: "row-label", x: left - 6, y: y + SEAT / 2 + 4, "text-anchor": "end", text: r + 1, "aria-hidden": "true" }));
      for (let n = 0; n < codes.length; n++) {
        const id = `${s.id}-${r + 1}-${n + 1}`;
        const free = codes[n] === "a";
        const cls = mine.has(id) ? "mine" : state.selected.has(id) ? "sel" : codes[n];
        const status = mine.has(id) ? "held for you" : free ? (state.selected.has(id) ? "selected" : "available") : codes[n] === "h" ? "on hold" : "sold";
        const x = left + n * (SEAT + GAP);
        const seat = el("rect", {
          class: `seat ${cls}`, x, y, width: SEAT, height: SEAT, rx: 4,
          role: free && !state.hold ? "checkbox" : "img",
          "aria-checked": free && !state.hold ? String(state.selected.has(id)) : null,
          "aria-label": `${seatLabel(id)}, ${status}`,
          tabindex: free && !state.hold ? "0" : null,
        }, el("title", { text: `${seatLabel(id)} — ${status}` }));
        if (free && !state.hold) {
          const toggle = () => {
            if (state.selected.has(id)) state.selected.delete(id);
            else if (state.selected.size >= MAX_SEATS) return say(`You can pick at most ${MAX_SEATS} seats.`, "info");
            else state.selected.add(id);
            say("");
            seat.setAttribute("class", `seat ${state.selected.has(id) ? "sel" : "a"}`);
            seat.setAttribute("aria-checked", String(state.selected.has(id)));
            onChange();
          };
          seat.addEventListener("click", toggle);
          seat.addEventListener("keydown", (e) => { if (e.key === " " || e.key === "Enter") { e.preventDefault(); toggle(); } });
        }
        // A tick marks picked seats and the fan's own, not colour alone.
        g.append(seat, el("path", { class: "tick", d: `M${x + 6} ${y + 12.5}l4 4l8-8.5`, "aria-hidden": "true" }));
      }
      y += SEAT + GAP;
    });
    svg.append(g);
    y += 24;
  }
  svg.setAttribute("viewBox", `0 0 ${width} ${Math.max(y, 60)}`);
  svg.setAttribute("height", Math.max(y, 60));
  const legend = el("ul", { class: "legend", "aria-label": "Legend" },
    el("li", {}, el("i", { class: "a" }), "Available"), el("li", {}, el("i", { class: "sel" }), "Yours"),
    el("li", {}, el("i", { class: "h" }), "On hold"), el("li", {}, el("i", { class: "s" }), "Sold"));
  // Keep keyboard focus on the same seat across redraws.
  const focused = document.activeElement && box.contains(document.activeElement) ? document.activeElement.getAttribute("aria-label") : null;
  const before = box.querySelector(".seat-scroll");
  const scrolled = before ? before.scrollLeft : null;
  // The map scrolls sideways on a narrow screen; as a focusable region it
  // scrolls by keyboard too, and a focused seat scrolls itself into view.
  const scroller = el("div", { class: "seat-scroll", tabindex: "0", role: "region", "aria-label": "Seat map, scrolls sideways on a small screen" }, svg);
  box.replaceChildren(m.sections.length ? scroller : el("p", { class: "sub", text: "Standing only." }), legend);
  // A redraw keeps the fan where they scrolled; the first one shows the
  // middle of the map, below the stage.
  scroller.scrollLeft = scrolled ?? (scroller.scrollWidth - scroller.clientWidth) / 2;
  if (focused) {
    const again = [...box.querySelectorAll("rect[tabindex]")].find((r) => r.getAttribute("aria-label").startsWith(focused.split(",").slice(0, 3).join(",")));
    if (again) again.focus();
  }
}

function drawSide(state, side, refresh) {
  const { event, map } = state;
  const cur = event.currency;
  if (state.hold) return side.replaceChildren(holdPanel(state, refresh));
  const parts = [];

  const picked = [...state.selected].sort();
  const pickedTotal = picked.reduce((t, id) => t + Number((map.sections.find((s) => s.id === id.split("-")[0]) || {}).price || 0), 0);
  parts.push(el("section", { class: "card", "aria-labelledby": "pick-h" },
    el("h2", { id: "pick-h", text: "Your picks" }),
    picked.length
      ? el("ul", { class: "seats-list" }, picked.map((id) => el("li", { text: seatLabel(id) })))
      : el("p", { class: "sub", text: "Choose up to four seats on the map, or let us find the best ones." }),
    picked.length ? el("p", { class: "total", text: `Total ${money(pickedTotal, cur)}` }) : null,
    el("button", { disabled: !picked.length, onclick: () => hold(state, { seats: picked }, refresh) }, picked.length ? `Hold ${picked.length} seat${picked.length > 1 ? "s" : ""}` : "Hold seats"),
  ));

  if (map.sections.length) {
    const sec = el("select", { id: "ba-section" }, map.sections.map((s) => el("option", { value: s.id, disabled: s.available === 0, text: `Section ${s.id} · ${money(s.price, cur)}${s.available === 0 ? " · sold out" : ""}` })));
    const qty = quantitySelect("ba-qty");
    parts.push(el("section", { class: "card", "aria-labelledby": "ba-h" },
      el("h2", { id: "ba-h", text: "Best available" }),
      el("div", { class: "form-row" }, el("label", { for: "ba-section", text: "Section" }), sec),
      el("div", { class: "form-row" }, el("label", { for: "ba-qty", text: "Seats" }), qty),
      el("button", { class: "secondary", onclick: () => hold(state, { section: sec.value, quantity: Number(qty.value) }, refresh) }, "Find seats together"),
    ));
  }

  if (map.zones.length) {
    parts.push(el("section", { class: "card", "aria-labelledby": "ga-h" },
      el("h2", { id: "ga-h", text: "Standing" }),
      el("div", { class: "zones" }, map.zones.map((z) => {
        const qty = quantitySelect(`ga-${z.id}`);
        return el("div", { class: "zone" },
          el("div", {}, el("strong", { text: z.id }), el("div", { class: "sub", text: `${money(z.price, cur)} · ${z.available ? z.available + " left" : "sold out"}` })),
          el("div", { class: "form-row" }, el("label", { for: `ga-${z.id}`, class: "sr-only", text: `Places in ${z.id}` }), qty,
            el("button", { class: "secondary", disabled: !z.available, onclick: () => hold(state, { zone: z.id, quantity: Number(qty.value) }, refresh) }, "Hold")));
      })),
    ));
  }
  side.replaceChildren(...parts);
}

function quantitySelect(id) {
  return el("select", { id }, [1, 2, 3, 4].map((n) => el("option", { value: n, text: String(n) })));
}

async function hold(state, body, refresh) {
  say("");
  try {
    const { data } = await api("POST", `/api/events/${state.event.id}/holds`, body);
    state.hold = data;
    state.selected.clear();
    sessionStorage.setItem(holdKey(state.event.id), data.id);
    say(`Held for you: ${describeHold(data)}.`, "info");
    await refresh();
  } catch (err) {
    if (err.code === "seat_unavailable" && err.seats.length) {
      err.seats.forEach((s) => state.selected.delete(s));
      say(`Someone was quicker: ${err.seats.map(seatLabel).join("; ")}. Pick other seats.`);
    } else say(explain(err));
    await refresh();
  }
}

function describeHold(h) {
  if (h.zone) return `${h.quantity} standing in ${h.zone}`;
  return h.seats.map(seatLabel).join("; ");
}

function holdPanel(state, refresh) {
  const h = state.hold;
  const cd = el("p", { class: "countdown", id: "countdown", "aria-live": "off" });
  const warn = el("p", { class: "sr-only", id: "countdown-sr", "aria-live": "polite" });
  const pay = el("button", { onclick: () => checkout(state, pay) }, `Check out · ${money(h.amount, state.event.currency)}`);
  const panel = el("section", { class: "card hold", "aria-labelledby": "hold-h" },
    el("h2", { id: "hold-h", text: "Held for you" }),
    h.zone ? el("p", { text: `${h.quantity} × standing, ${h.zone}` }) : el("ul", { class: "seats-list" }, h.seats.map((s) => el("li", { text: seatLabel(s) }))),
    el("p", { class: "sub", text: "Time left to check out" }), cd, warn,
    el("div", { class: "form-row" }, pay,
      el("button", { class: "secondary", onclick: () => release(state, refresh) }, "Release")),
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
  if (sr && (left === 60 || left === 30 || left === 10)) sr.textContent = `${left} seconds left to check out.`;
  if (left === 0) {
    sessionStorage.removeItem(holdKey(state.event.id));
    state.hold = null;
    say("Your hold has expired and the seats went back on sale.");
    refresh();
  }
}

async function release(state, refresh) {
  try {
    await api("DELETE", `/api/holds/${state.hold.id}`);
  } catch (err) { say(explain(err)); }
  sessionStorage.removeItem(holdKey(state.event.id));
  state.hold = null;
  say("Released. The seats are back on sale.", "info");
  await refresh();
}

async function checkout(state, button) {
  button.disabled = true;
  button.textContent = "Opening payment…";
  try {
    const { data } = await api("POST", `/api/holds/${state.hold.id}/checkout`, undefined, `checkout-${state.hold.id}`);
    sessionStorage.removeItem(holdKey(state.event.id));
    location.assign(data.payment.pay_url);
  } catch (err) {
    button.disabled = false;
    button.textContent = "Check out";
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
  document.title = "Your order — Foyer Tickets";
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
      else { render(el("h1", { text: "Your order" })); return say(explain(err)); }
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
  const statusText = {
    pending_payment: "Waiting for the payment to be confirmed…",
    paid: "Paid. Enjoy the show!",
    refund_pending: "Your seats were no longer available when the payment arrived. We are refunding you.",
    refunded: "Your seats were no longer available when the payment arrived. The payment has been refunded.",
    payment_failed: "The payment was declined and your seats went back on sale. You can pick seats again.",
  }[o.status] || o.status;
  const cls = o.status === "paid" ? "paid" : o.status === "pending_payment" ? "" : "refund";
  render(
    el("p", {}, el("a", { href: `/events/${o.event_id}`, "data-nav": true, text: "← Back to the event" })),
    el("h1", { text: "Your order" }),
    el("p", { class: `status ${cls}`, text: statusText }),
    el("p", { class: "sub", text: `Order ${o.id} · ${money(o.amount, o.currency)}` }),
    o.link ? el("p", { class: "keep" }, "Keep this page's address: ",
      el("a", { href: o.link, text: "the link to your order" }),
      " shows your order and tickets at any time, without waiting in line again.") : null,
    o.tickets.length ? el("h2", { text: `${o.tickets.length} ticket${o.tickets.length > 1 ? "s" : ""}` }) : null,
    el("div", { class: "tickets" }, o.tickets.map((t) => el("article", { class: "ticket", "aria-label": t.seat ? seatLabel(t.seat) : `Standing, ${t.zone}` },
      el("div", { class: "what", text: t.seat ? seatLabel(t.seat) : `Standing · ${t.zone}` }),
      t.delivery
        ? [el("p", { class: "sub", text: `Issued ${when(t.delivery.delivered_at)}` }), el("code", { text: t.delivery.code })]
        : el("p", { class: "sub", text: "Issuing your ticket…" }),
    ))),
  );
}

route();
