local t = {1}
for i = 1, 60 do t = {t, t} end
return { kind = "manycore", t }
