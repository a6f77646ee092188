// Says so when this browser has no font for the script of the text on the page: without one, a Chinese turn
// shows as empty boxes and nothing else tells the reader why (docs/languages.md, "Screens").
//
// How: every text of a dialogue carries `lang`. For each language on the page whose script needs its own font,
// one of its characters is drawn on a small canvas in the font the page gives that text, beside a character no
// font has (U+10FFFD, a private-use noncharacter): where the two draw the same pixels, the browser fell back to
// its "missing glyph" box, so it has no font for that script.
(function () {
  // A language's primary subtag -> [its script's name, characters of that script].
  const SCRIPTS = {
    zh: ["Chinese", "中文字"], ja: ["Japanese", "日本語かな"], ko: ["Korean", "한국어"],
    ar: ["Arabic", "عربي"], fa: ["Persian", "فارسی"], ur: ["Urdu", "اردو"], he: ["Hebrew", "עברית"],
    hi: ["Devanagari", "हिन्दी"], mr: ["Devanagari", "मराठी"], ne: ["Devanagari", "नेपाली"],
    bn: ["Bengali", "বাংলা"], ta: ["Tamil", "தமிழ்"], te: ["Telugu", "తెలుగు"], th: ["Thai", "ไทย"],
    km: ["Khmer", "ខ្មែរ"], lo: ["Lao", "ລາວ"], my: ["Myanmar", "မြန်မာ"], ka: ["Georgian", "ქართული"],
    hy: ["Armenian", "Հայերեն"], am: ["Ethiopic", "አማርኛ"], ru: ["Cyrillic", "Жизнь"], el: ["Greek", "Ελληνικά"],
  };
  const MISSING = String.fromCodePoint(0x10fffd);
  const SIZE = 32;

  function pixels(context, text, font) {
    context.clearRect(0, 0, SIZE * 2, SIZE * 2);
    context.font = SIZE + "px " + font;
    context.fillText(text, 0, SIZE);
    return context.getImageData(0, 0, SIZE * 2, SIZE * 2).data;
  }

  function same(a, b) {
    for (let i = 0; i < a.length; i += 1) { if (a[i] !== b[i]) { return false; } }
    return true;
  }

  function hasGlyphs(context, characters, font) {
    const missing = pixels(context, MISSING, font);
    // Every character must draw otherwise than the missing-glyph box (one found in a partial font is not enough).
    return Array.from(characters).every((character) => !same(pixels(context, character, font), missing));
  }

  function check() {
    const canvas = document.createElement("canvas");
    canvas.width = SIZE * 2;
    canvas.height = SIZE * 2;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    const main = document.getElementById("main");
    if (!context || !main) { return; }
    const seen = new Set();
    const lacking = [];
    for (const element of main.querySelectorAll("[lang]")) {
      const code = (element.getAttribute("lang") || "").split("-")[0].toLowerCase();
      const script = SCRIPTS[code];
      if (!script || seen.has(code) || !(element.textContent || "").trim()) { continue; }
      seen.add(code);
      if (!hasGlyphs(context, script[1], getComputedStyle(element).fontFamily)) { lacking.push(script[0]); }
    }
    if (!lacking.length) { return; }
    const names = Array.from(new Set(lacking)).join(", ");
    const notice = document.createElement("p");
    notice.className = "notice warning";
    notice.id = "missing-glyphs";
    notice.setAttribute("role", "status");
    notice.textContent = "This browser has no font for " + names + " text, so its characters may show as empty "
      + "boxes. Install a font that covers it (for Chinese, Japanese and Korean: Noto Sans CJK or Source Han Sans; "
      + "on Debian or Ubuntu the package fonts-noto-cjk) and reload the page.";
    main.prepend(notice);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", check);
  } else {
    check();
  }
})();
