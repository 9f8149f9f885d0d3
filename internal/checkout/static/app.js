// paylink payment page: live validation, brand detection and the
// surcharge update. The form works without this script.
(function () {
  "use strict";
  var form = document.getElementById("payform");
  if (!form) { return; }
  var holder = document.getElementById("card_holder");
  var num = document.getElementById("card_number");
  var exp = document.getElementById("card_expiry");
  var cvc = document.getElementById("card_cvc");
  var brandEl = document.getElementById("brand");
  var surchargeEl = document.getElementById("surcharge");
  var totalEl = document.getElementById("total");
  var payTotal = document.getElementById("pay-total");
  var hint = document.getElementById("pay-hint");
  var pay = document.getElementById("pay");
  var lastQuoted = "";
  var unquoted = [surchargeEl.textContent, totalEl.textContent, payTotal.textContent, hint ? hint.textContent : ""];

  function digits(s) { return s.replace(/[\s-]/g, ""); }
  function luhn(s) {
    var sum = 0, dbl = false;
    for (var i = s.length - 1; i >= 0; i--) {
      var d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) { return false; }
      if (dbl) { d *= 2; if (d > 9) { d -= 9; } }
      sum += d; dbl = !dbl;
    }
    return s.length >= 12 && sum % 10 === 0;
  }
  // The brand rules are the server's (paylink.IINRanges), in its order:
  // "digits,low,high,name,code length,number lengths" per rule; the first
  // that matches names the brand, the length of its security code and
  // the lengths its numbers have. A page without them (rendered by an
  // older instance during an upgrade) leaves the brand to the server
  // rather than refuse every card, and one without the lengths leaves
  // the length to it.
  var rules = (form.getAttribute("data-brands") || "").split(";").map(function (r) { return r.split(","); })
    .filter(function (r) { return r.length >= 5; });
  function rule(s) {
    for (var i = 0; i < rules.length; i++) {
      var r = rules[i], p = +s.slice(0, +r[0]);
      if (s.length >= +r[0] && p >= +r[1] && p <= +r[2]) { return r; }
    }
    return ["", "", "", "", 0];
  }
  function brand(s) { return rule(s)[3]; }
  // issued: the number is of a brand the server knows, at one of its
  // lengths (paylink.ParseCardNumber's rule).
  function issued(s) {
    var r = rule(s);
    return !rules.length || (r[3] !== "" && (r[5] === undefined || r[5].split(" ").indexOf(String(s.length)) >= 0));
  }
  function setError(input, msg) {
    var el = document.getElementById(input.id + "-err");
    if (msg) { input.setAttribute("aria-invalid", "true"); } else { input.removeAttribute("aria-invalid"); }
    if (el) { el.textContent = msg; }
  }
  function checkHolder() {
    var ok = holder.value.trim() !== "";
    setError(holder, ok ? "" : "Enter the name on the card.");
    return ok;
  }
  function checkNumber(final) {
    var s = digits(num.value);
    brandEl.textContent = s.length >= 2 ? brand(s) : "";
    if (!/^\d*$/.test(s)) { setError(num, "Use digits only."); return false; }
    if (luhn(s) && issued(s)) { setError(num, ""); quote(s); return true; }
    unquote();
    if (final || s.length >= 16) { setError(num, s ? "This card number is not valid." : "Enter the card number."); }
    return false;
  }
  function checkExpiry() {
    var m = /^(\d{1,2})\s*\/?\s*(\d{2}|\d{4})$/.exec(exp.value.trim());
    if (!m || +m[1] < 1 || +m[1] > 12) { setError(exp, "Enter the expiry date as MM/YY."); return false; }
    var y = m[2].length === 2 ? 2000 + +m[2] : +m[2], now = new Date();
    if (y < now.getFullYear() || (y === now.getFullYear() && +m[1] < now.getMonth() + 1)) {
      setError(exp, "This card has expired."); return false;
    }
    setError(exp, ""); return true;
  }
  // The security code has the brand's length (4 on American Express, 3
  // on the others), 3 or 4 digits while the brand is not known.
  function checkCvc() {
    var v = cvc.value.trim(), n = +rule(digits(num.value))[4];
    var ok = /^\d{3,4}$/.test(v) && (!n || v.length === n);
    setError(cvc, ok ? "" : n ? "Enter the card's " + n + "-digit security code." : "Enter the 3 or 4 digit security code.");
    return ok;
  }
  // unquote puts back the summary the page came with: no card, no surcharge.
  function unquote() {
    lastQuoted = "";
    surchargeEl.textContent = unquoted[0];
    totalEl.textContent = unquoted[1];
    payTotal.textContent = unquoted[2];
    if (hint) { hint.textContent = unquoted[3]; }
  }
  function quote(s) {
    if (s === lastQuoted || !window.fetch) { return; }
    lastQuoted = s;
    fetch(form.getAttribute("data-surcharge"), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": form.getAttribute("data-csrf") },
      body: JSON.stringify({ card_number: s })
    }).then(function (r) { return r.ok ? r.json() : null; }).then(function (q) {
      if (s !== lastQuoted) { return; }
      if (!q) { unquote(); return; }
      surchargeEl.textContent = q.surcharge_label;
      totalEl.textContent = q.total;
      payTotal.textContent = q.total;
      if (hint) {
        hint.textContent = q.surcharge_label === "None" ? "No card surcharge applies to this card." : "The total includes the card surcharge for this card.";
      }
    }).catch(function () { if (s === lastQuoted) { unquote(); } });
  }
  num.addEventListener("input", function () {
    checkNumber(false);
    if (cvc.hasAttribute("aria-invalid")) { checkCvc(); } // its length follows the brand
  });
  num.addEventListener("blur", function () { checkNumber(true); });
  exp.addEventListener("input", function () {
    var v = exp.value.replace(/[^\d]/g, "");
    if (v.length >= 3 && exp.value.indexOf("/") < 0) { exp.value = v.slice(0, 2) + "/" + v.slice(2, 4); }
  });
  exp.addEventListener("blur", checkExpiry);
  cvc.addEventListener("blur", checkCvc);
  // The time zone is read when the form is sent, not at load: the first
  // Intl call loads ICU's zone data, a 35-50 ms task on a desktop CPU and
  // longer on a phone, which Lighthouse counted as blocking time.
  function setTimezone() {
    var tz = document.getElementById("timezone");
    try { tz.value = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { tz.value = ""; }
  }
  // A wallet's or Zip's form carries the details typed in the card form
  // (its hidden fields hold the page's), and the time zone.
  function carryDetails(wf) {
    for (var i = 0; i < wf.elements.length; i++) {
      var el = wf.elements[i], from = form.elements[el.name];
      if (el.type === "hidden" && el.name !== "csrf" && from) { el.value = from.value; }
    }
  }
  document.addEventListener("submit", function (ev) {
    setTimezone();
    if (ev.target !== form) { carryDetails(ev.target); }
  });
  form.addEventListener("submit", function (ev) {
    // Every field is checked, and focus goes to the first problem in the
    // page's reading order.
    var fields = [holder, num, exp, cvc];
    var ok = [checkHolder(), checkNumber(true), checkExpiry(), checkCvc()];
    var first = fields.filter(function (el, i) { return !ok[i]; })[0];
    if (first) { ev.preventDefault(); first.focus(); return; }
    pay.disabled = true; // a second click would only wait for this payment
  });
  // clearCard empties the card fields and puts the brand, the summary and
  // the Pay button back as the page came.
  function clearCard() {
    [num, exp, cvc].forEach(function (el) { el.value = ""; setError(el, ""); });
    brandEl.textContent = "";
    unquote();
  }
  // Back to this page (from a bank check or a decline) finds the browser
  // restoring the card typed; it is cleared, so a shared device never
  // shows it again and the summary never hides what Pay would charge.
  // A page restored from the back-forward cache can be sent again.
  function backForward(ev) {
    var nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
    var old = performance.navigation; // browsers without Navigation Timing 2
    return ev.persisted || (nav ? nav.type === "back_forward" : !!old && old.type === 2);
  }
  window.addEventListener("pageshow", function (ev) {
    pay.disabled = false;
    if (backForward(ev)) { clearCard(); }
  });
  if (num.value && !backForward({})) { checkNumber(false); }
}());
