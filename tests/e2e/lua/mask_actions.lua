-- Runs the RL agent twice with the same seed — without and with
-- scripts/memory_mask.lua — logging every state the agent passes through (a
-- pass-through action mask), and prints how many of the agent's steps differ.
local function logger(log)
  return function(s)
    log[#log + 1] = table.concat(s.arranged_core, ",")
    return {}
  end
end
local plain, masked = {}, {}
pb.heuristic{ name = "log", kind = "action_mask", fn = logger(plain) }
pb.cmd("partition --method rl --episodes 60 --seed 7")
local plain_storage = pb.plan().metrics.max_storage
pb.clear()
pb.heuristic{ name = "log", kind = "action_mask", fn = logger(masked) }
pb.cmd("source scripts/memory_mask.lua")
local masked_storage = pb.plan().metrics.max_storage
local differ = 0
for i = 1, math.max(#plain, #masked) do
  if plain[i] ~= masked[i] then differ = differ + 1 end
end
print(string.format("steps without %d, with %d, differing %d", #plain, #masked, differ))
print(string.format("max storage without %.0f, with %.0f, memory %.0f", plain_storage, masked_storage, pb.layout().memory))
