#!/usr/bin/env python3
"""svg_text_fit.py SVG TITLE — checks that every text of the Graphviz node
named TITLE (e.g. the export's "legend" table) fits in its table cell when
drawn in the font this machine gives its font-family (fc-match: what a
browser here renders), not in the widths Graphviz estimated. Prints one
line per text that runs past its cell's edge and exits 1 if any does.

The font's advance widths are read from the TTF file itself (cmap format 4
and hmtx), so the check does not depend on Graphviz's metrics. Not a test
itself: tests/e2e/export_legend_fit.sh runs it.
"""
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


class Font:
    """Advance widths of a TrueType font, in em."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.d = f.read()
        n = struct.unpack_from(">H", self.d, 4)[0]
        self.t = {}
        for i in range(n):
            tag, _, off, _ = struct.unpack_from(">4sIII", self.d, 12 + 16 * i)
            self.t[tag.decode("latin-1")] = off
        self.upem = struct.unpack_from(">H", self.d, self.t["head"] + 18)[0]
        self.nh = struct.unpack_from(">H", self.d, self.t["hhea"] + 34)[0]
        self.cmap = self._cmap4()

    def _cmap4(self):
        base = self.t["cmap"]
        n = struct.unpack_from(">H", self.d, base + 2)[0]
        for i in range(n):
            pid, eid, off = struct.unpack_from(">HHI", self.d, base + 4 + 8 * i)
            sub = base + off
            if pid == 3 and eid == 1 and struct.unpack_from(">H", self.d, sub)[0] == 4:
                return sub
        raise SystemExit("no Unicode BMP cmap (format 4) in the font")

    def glyph(self, c):
        sub, d = self.cmap, self.d
        segx2 = struct.unpack_from(">H", d, sub + 6)[0]
        ends, starts = sub + 14, sub + 16 + segx2
        deltas, ranges = starts + segx2, starts + 2 * segx2
        for s in range(segx2 // 2):
            end = struct.unpack_from(">H", d, ends + 2 * s)[0]
            if c > end:
                continue
            start = struct.unpack_from(">H", d, starts + 2 * s)[0]
            if c < start:
                return 0
            delta = struct.unpack_from(">h", d, deltas + 2 * s)[0]
            ro = struct.unpack_from(">H", d, ranges + 2 * s)[0]
            if ro == 0:
                return (c + delta) & 0xFFFF
            gi = struct.unpack_from(">H", d, ranges + 2 * s + ro + 2 * (c - start))[0]
            return (gi + delta) & 0xFFFF if gi else 0
        return 0

    def width(self, text):
        w = 0
        for ch in text:
            g = min(self.glyph(ord(ch)), self.nh - 1)
            w += struct.unpack_from(">H", self.d, self.t["hmtx"] + 4 * g)[0]
        return w / self.upem


fonts = {}


def font_for(family, bold):
    key = (family, bold)
    if key not in fonts:
        pat = family.split(",")[0] + (":bold" if bold else "")
        path = subprocess.run(["fc-match", "-f", "%{file}", pat], capture_output=True,
                              text=True, check=True).stdout
        fonts[key] = Font(path)
    return fonts[key]


def cells(g):
    """The table's cell rectangles (x0, y0, x1, y1)."""
    out = []
    for p in g.iter(NS + "polygon"):
        if p.get("fill") != "none":
            continue
        pts = [tuple(map(float, q.split(","))) for q in p.get("points").split()]
        xs, ys = [q[0] for q in pts], [q[1] for q in pts]
        out.append((min(xs), min(ys), max(xs), max(ys)))
    return out


def main():
    svg, title = sys.argv[1], sys.argv[2]
    root = ET.parse(svg).getroot()
    node = None
    for g in root.iter(NS + "g"):
        t = g.find(NS + "title")
        if g.get("class") == "node" and t is not None and t.text == title:
            node = g
    if node is None:
        print("no node titled '%s' in %s" % (title, svg))
        return 1
    rects = cells(node)
    bad = checked = 0
    for t in node.iter(NS + "text"):
        s = "".join(t.itertext())
        if not s.strip():
            continue
        x, y = float(t.get("x")), float(t.get("y"))
        inside = [r for r in rects if r[0] <= x <= r[2] and r[1] <= y <= r[3]]
        if not inside:
            continue
        c = min(inside, key=lambda r: (r[2] - r[0]) * (r[3] - r[1]))
        f = font_for(t.get("font-family", "serif"), t.get("font-weight") == "bold")
        w = f.width(s) * float(t.get("font-size", "14"))
        anchor = t.get("text-anchor", "start")
        x0 = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
        checked += 1
        if x0 < c[0] - 0.01 or x0 + w > c[2] + 0.01:
            bad += 1
            print("'%s' spans x %.1f-%.1f, its cell %.1f-%.1f" % (s, x0, x0 + w, c[0], c[2]))
    print("%d texts of '%s' checked, %d past their cell" % (checked, title, bad))
    return 1 if bad or not checked else 0


sys.exit(main())
