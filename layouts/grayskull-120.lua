-- grayskull-120.lua — the grid shape of Tenstorrent's Grayskull (e150):
-- 120 Tensix cores in a 10 x 12 grid (DRAM, PCIe and empty cells of the
-- physical NoC grid left out), as a routed mesh (docs/mesh.md).
-- Sources (published):
--   * 120 Tensix cores, 1 MB of L1 SRAM per core, 92 TFLOPS FP16 for the
--     chip (766 GFLOPS per core): Tenstorrent's Grayskull page
--     (tenstorrent.com/technology: "120MB on-chip SRAM") and G. Hotz's
--     tt-twitch notes (github.com/geohot/tt-twitch);
--   * the Tensix grid and two NoCs in opposite directions, outputs pushed
--     core to core: docs.tenstorrent.com/pybuda/latest/hardware.html;
--   * dimension-ordered, row-first (horizontal, then vertical) routing:
--     docs.tenstorrent.com/tt-vscode-toolkit/tensix-playground.
-- Not from a source (assumptions, stated so they can be replaced): the NoC
-- link rate (32 B per cycle at 1.2 GHz), one cycle per hop, and the group
-- port `bandwidth` (two NoCs' links). The real NoCs are tori; this model is
-- a mesh without wrap-around links (docs/mesh.md).
return {
	kind = "manycore",
	name = "grayskull120",
	cores = 120,
	mac_rate = 92e12 / 2 / 120, -- FP16 FLOPs of the chip / 2 per MAC / cores
	memory = 1024 * 1024,       -- 1 MB of L1 per Tensix core
	bandwidth = 2 * 38.4e9,     -- assumed: a group's port, two NoCs' links
	mesh = { rows = 10, cols = 12, link_gbs = 38.4, hop_ns = 0.83,
	         routing = "xy", io = { row = 0, col = 0 } },
	reward = { mode = "max_time", a = 1.0, penalty = 100.0 },
}
