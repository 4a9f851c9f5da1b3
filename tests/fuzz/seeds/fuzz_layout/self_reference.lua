local t = {}
t.a = t
return { kind = "manycore", t = t }
