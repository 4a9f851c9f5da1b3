pb.on("plan_change", function() while true do end end) pb.cmd("partition --method greedy")
