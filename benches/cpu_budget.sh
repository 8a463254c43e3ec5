# Sourced by benches/scale.sh: a CPU budget of its own for a process and
# its children, and the CPU they spent, through the kernel's control
# groups, so that a benchmark's figures hold on a machine of any size
# (issue 38). cgroup v1 (`cpu` and `cpuacct` hierarchies:
# cpu.cfs_quota_us over cpu.cfs_period_us, cpuacct.usage in ns) or
# cgroup v2 (`cpu.max`, `cpu.stat`'s usage_usec), whichever the machine
# has; as root only.
#   budget_check          exits 77 (skipped), saying why, when neither
#                         can be used
#   budget_make NAME CPUS a group NAME limited to CPUS (e.g. 0.2; "max":
#                         unbounded); made again empty if it exists
#   budget_enter NAME     moves this shell ($BASHPID) into NAME: what it
#                         starts from then on runs in NAME's budget
#   budget_usage NAME     CPU time NAME's processes have used, µs
#   budget_drop NAME      removes the group (its processes gone)
CG_ROOT=${CG_ROOT:-/sys/fs/cgroup}
CG_PREFIX=ticket-issuer-bench
cg_mode=""
budget_check() {
    [ "$(id -u)" = 0 ] || { echo "CPU budgets need root (cgroups under $CG_ROOT): not run" >&2; exit 77; }
    if [ -w "$CG_ROOT/cpu" ] && [ -e "$CG_ROOT/cpu/cpu.cfs_quota_us" ] && [ -e "$CG_ROOT/cpuacct/cpuacct.usage" ]; then
        cg_mode=v1
    elif [ -e "$CG_ROOT/cgroup.controllers" ] && grep -qw cpu "$CG_ROOT/cgroup.controllers"; then
        cg_mode=v2
        grep -qw cpu "$CG_ROOT/cgroup.subtree_control" || echo +cpu >"$CG_ROOT/cgroup.subtree_control"
    else
        echo "neither cgroup v1 (cpu and cpuacct under $CG_ROOT) nor cgroup v2 with the cpu controller is available: no CPU budgets on this machine: not run" >&2
        exit 77
    fi
}
cg_dirs() { # NAME: the group's folders
    case $cg_mode in
    v1) echo "$CG_ROOT/cpu/$CG_PREFIX-$1 $CG_ROOT/cpuacct/$CG_PREFIX-$1" ;;
    v2) echo "$CG_ROOT/$CG_PREFIX-$1" ;;
    esac
}
budget_drop() {
    local d
    for d in $(cg_dirs "$1"); do
        [ -d "$d" ] || continue
        # Any process left is moved out first (a group with tasks can't go).
        local procs=$d/cgroup.procs
        while read -r pid; do echo "$pid" >"$(dirname "$d")/cgroup.procs" 2>/dev/null || true; done <"$procs"
        rmdir "$d" 2>/dev/null || true
    done
}
budget_make() {
    local name=$1 cpus=$2 d period=100000 quota
    budget_drop "$name"
    if [ "$cpus" = max ]; then
        quota=-1
    else
        quota=$(awk -v c="$cpus" -v p=$period 'BEGIN { printf "%d", c * p }')
    fi
    for d in $(cg_dirs "$name"); do mkdir -p "$d"; done
    case $cg_mode in
    v1)
        local cpu=$CG_ROOT/cpu/$CG_PREFIX-$name
        echo $period >"$cpu/cpu.cfs_period_us"
        echo "$quota" >"$cpu/cpu.cfs_quota_us"
        ;;
    v2)
        local q=$quota
        [ "$q" = -1 ] && q=max
        echo "$q $period" >"$CG_ROOT/$CG_PREFIX-$name/cpu.max"
        ;;
    esac
}
budget_enter() {
    local d
    for d in $(cg_dirs "$1"); do echo "$BASHPID" >"$d/cgroup.procs"; done
}
budget_usage() {
    case $cg_mode in
    v1) echo $(($(cat "$CG_ROOT/cpuacct/$CG_PREFIX-$1/cpuacct.usage") / 1000)) ;;
    v2) sed -nE 's/^usage_usec ([0-9]+)/\1/p' "$CG_ROOT/$CG_PREFIX-$1/cpu.stat" ;;
    esac
}
