-- Shows that the RL agent starts from the allocation of
-- scripts/greedy_initial.lua: a pass-through action mask records the first
-- state the agent acts in, with and without the script.
local first
local function spy(s)
  first = first or table.concat(s.arranged_core, " ")
  return {}
end
pb.heuristic{ name = "first_state", kind = "action_mask", fn = spy }
pb.cmd("partition --method rl --episodes 5 --seed 1")
local plain_first = first
first = nil
local out = pb.cmd("source scripts/greedy_initial.lua")
local start = out:match("greedy_initial: start ([%d ]+)\n")
print("without the script the agent starts at " .. plain_first)
print("the script's allocation: " .. tostring(start))
print("with the script the agent starts at " .. tostring(first))
print("first state = initial_partition: " .. ((start and first == start and plain_first ~= start) and "yes" or "no"))
