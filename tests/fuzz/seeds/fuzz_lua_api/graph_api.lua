local g = pb.graph()
local n = pb.node(0)
print(n, n.id, n.name, n.op, n.macs, n.shape, n.inputs, n.outputs, n.preds, n.succs, n.attrs, n.group)
print(pb.node(-1), pb.node(1e9), pb.node("nope"), pb.node(g.n_nodes - 1))
for _, x in ipairs(pb.nodes()) do local _ = x.input_shapes, x.shapes, x.members, x.short_name end
print(#pb.topo(), #pb.edges(), #pb.find("a"), #pb.find{op = "Relu"}, #pb.find{name = "^b"})
print(pcall(pb.find, "[a"), pcall(pb.node, {}), pcall(function() return n.nofield end))
print(pb.layout(), pb.plan(), pb.partition_apply({2, 2, 2}, 0), pcall(pb.partition_apply, {1}, 0))
print(pcall(pb.partition_apply, {1, "x"}, 1), pb.partition_apply({3, 3}, 99))
