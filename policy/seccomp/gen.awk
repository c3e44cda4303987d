# gen.awk - turn policy/seccomp/<role>.list into C tables.
# Line format: "syscall   reason for allowing (or denying) it"; '#' comments.
# A line without a reason is an error: every entry must say why.
FNR == 1 {
	if (role != "") print "};"
	role = FILENAME; sub(/.*\//, "", role); sub(/\.list$/, "", role)
	roles[++nroles] = role
	printf "static const struct sc_rule sc_rules_%s[] = {\n", role
}
/^[ \t]*(#|$)/ { next }
{
	name = $1; $1 = ""; reason = $0; sub(/^[ \t]+/, "", reason)
	if (length(reason) < 8) { printf "%s:%d: %s has no reason (8 characters at least)\n", FILENAME, FNR, name > "/dev/stderr"; exit 1 }
	gsub(/\\/, "\\\\", reason); gsub(/"/, "\\\"", reason)
	printf "\t{ \"%s\", \"%s\" },\n", name, reason
}
END {
	if (role != "") print "};"
	print "static const struct sc_list sc_lists[] = {"
	for (i = 1; i <= nroles; i++)
		printf "\t{ \"%s\", sc_rules_%s, sizeof(sc_rules_%s) / sizeof(sc_rules_%s[0]) },\n", roles[i], roles[i], roles[i], roles[i]
	print "};"
}
