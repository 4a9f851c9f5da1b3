local function try(f) return pcall(f) end
pb.heuristic{name = "c", kind = "cost_term", fn = function(p)
  try(function() pb.cmd("open models/resnet18.onnx") end)
  try(function() pb.cmd("layout layouts/manycore-64.lua") end)
  try(pb.clear) try(pb.undo) try(pb.redo)
  try(function() pb.cmd("partition --method equal") end)
  try(function() pb.cmd("lua pb.clear()") end)
  try(function() pb.heuristic{kind = "cost_term", fn = print} end)
  return 0 end}
pb.on("plan_change", function() try(function() pb.cmd("undo") end) try(pb.clear) end)
pb.rule{name = "r", match = function(op) pb.cmd("open models/resnet18.onnx") return true end, fusable = true}
pb.cmd("partition --method greedy")
print(pcall(pb.cmd, "fuse"))
pb.cmd("evaluate")
