# The package as an application installs it: build, `npm pack`, install the
# tarball into a fresh app without dev tooling, run examples/first-jobs.mjs
# there with plain node (scripts/packCheck.ts). Sourced by .ci/run.
echo "== ci: package check"
npx tsx scripts/packCheck.ts
