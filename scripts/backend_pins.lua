-- backend_pins.lua — backend pins for the mapping: every convolution runs on
-- the FPGA, whatever the mapper would choose (on hetero.lua the GPU).
--
-- `backend = "name"` places the matching operators on that backend
-- (`partbench map`); a backend the layout lacks, or one that does not
-- support the operator, is an error naming the rule (docs/lua-api.md).
--
-- Run:  partbench run scripts/backend_pins.lua models/resnet18.onnx --layout layouts/hetero.lua
local function on(out, backend, op)
  local n = 0
  for o, be in out:gmatch('"op": "(%w+)",%s*"backends": %b[],%s*"priority": %b{},%s*"backend": "(%w+)"') do
    if o == op and be == backend then n = n + 1 end
  end
  return n
end
local before = pb.cmd("map --json")
pb.rule{ name = "conv_on_fpga", backend = "fpga", match = function(op) return op.op == "Conv" end }
local after = pb.cmd("map --json")
print(string.format("backend_pins: Conv nodes on the FPGA %d -> %d (of %d)",
                    on(before, "fpga", "Conv"), on(after, "fpga", "Conv"), #pb.find{op = "Conv"}))
