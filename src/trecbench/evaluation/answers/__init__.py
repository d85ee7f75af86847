"""Answer scores: nugget assignment (`assign/`: string, citation, model assigners and assignment files), then
`scoring` turns assignments into V_strict, V, A_strict, A, W_strict, W."""
