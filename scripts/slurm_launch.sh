# shellcheck shell=bash
# MODEL_PATH, CKPT_DIR, OUT_DIR, ... are read by the job script's overrides and arguments; NNODES, STEP, ... are
# the job script's run variables.
# shellcheck disable=SC2034,SC2153
# The Ray/Slurm bootstrap of the generated job scripts (recipe/rlif/<run>.sh and recipe/rlif/eval/<run>.sh).
#
# A generated script holds only what belongs to its run: its #SBATCH header, a few run variables, its data files,
# its verl overrides (or evaluation arguments). It sources this file from the checkout it was submitted from and
# calls its steps in order, so that a diff between two runs shows only what differs between them:
#
#   training (RUN_NAME RUN_PROJECT NNODES GPUS_PER_NODE PREFLIGHT_OPTIONS set by the script):
#     job_start; hub_model <repo id>; TRAIN_DATA=(...) VAL_DATA=(...); ray_start; OVERRIDES=(...); verl_run
#   evaluation (RUN_NAME RUN_PROJECT STEP PREFLIGHT_OPTIONS set by the script):
#     eval_start; hub_model <repo id>; EVAL_FILES=(...); eval_preflight; EVAL_ARGS=(...) or EVAL_BENCHMARKS=(...); eval_run
#   probe (RUN_NAME RUN_PROJECT PREFLIGHT_OPTIONS set by the script; recipe/rlif/probe/<run>.sh):
#     probe_start; hub_model <repo id>; EVAL_FILES=(training files); eval_preflight; PROBE_ARGS=(...); probe_run
#
# Sourcing defines the steps and runs nothing. Never `set -x` or print the environment here: .env holds tokens.

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    echo "error: $0 is sourced by the scripts in recipe/rlif/ (sbatch recipe/rlif/<run>.sh), not run by itself" >&2
    exit 2
fi

# ---- repository root, .env ---------------------------------------------------------------------------------------
repo_root_and_env() {
    # RLIF_ROOT is set by the job script: the checkout it was generated in (its #SBATCH --chdir), or for a script
    # generated with --portable the submit directory (sbatch runs a spool copy of the script, so its own path says
    # nothing). The first line of the log says which, and where the job was submitted from.
    cd "$RLIF_ROOT" || exit
    echo "[$(date -Is)] $RUN_NAME: runs in $RLIF_ROOT (submitted from ${SLURM_SUBMIT_DIR:-?})"
    if [[ "$RLIF_ROOT" == *[[:space:],]* ]]; then
        echo "error: the repository path must not contain spaces or commas (verl overrides): $RLIF_ROOT" >&2
        exit 2
    fi
    if [[ -f .env ]]; then
        set -a
        # shellcheck source=/dev/null
        source .env
        set +a
    fi
    export RLIF_ROOT
    PYTHON="${RLIF_PYTHON:-python}"
}

# ---- runtime: the host's Python environment, or the rlif image run by Slurm (docs/cluster.md) ----------------------
# Every Python step runs through `on_nodes` (an srun step) or, in training, `on_head`; RLIF_RUNTIME (.env) says where:
# `host` (RLIF_PYTHON's environment, e.g. scripts/setup_gpu_env.sh's venv), `pyxis` (srun --container-image, one
# named container per node that the Ray node and the driver share, so they see the same /tmp) or `apptainer`
# (apptainer exec --nv; host /tmp and network are shared by default).
job_runtime() {
    RLIF_RUNTIME="${RLIF_RUNTIME:-host}"
    CONTAINER_SRUN=()
    CONTAINER_EXEC=()
    case "$RLIF_RUNTIME" in
        host) ;;
        pyxis | apptainer)
            if [[ -z "${RLIF_IMAGE:-}" ]]; then
                echo "error: RLIF_RUNTIME=$RLIF_RUNTIME needs RLIF_IMAGE in .env (a .sqsh/.sif file or a registry image; docs/cluster.md)" >&2
                exit 2
            fi
            # The checkout, its data and checkpoints, the Hub cache and any site mounts, at the same paths inside.
            local mounts="$RLIF_ROOT:$RLIF_ROOT"
            local cache="${HF_HUB_CACHE:-${HF_CACHE_DIR:-}}"
            if [[ -n "$cache" ]]; then mounts+=",$cache:$cache"; fi
            if [[ -n "${RLIF_CONTAINER_MOUNTS:-}" ]]; then mounts+=",$RLIF_CONTAINER_MOUNTS"; fi
            # ~/.local packages must not shadow the image's.
            export PYTHONNOUSERSITE=1
            if [[ "$RLIF_RUNTIME" == pyxis ]]; then
                CONTAINER_SRUN=(--container-image="$RLIF_IMAGE" --container-mounts="$mounts" --container-workdir="$RLIF_ROOT"
                    --no-container-mount-home --container-name="rlif_${SLURM_JOB_ID}")
            else
                CONTAINER_EXEC=(apptainer exec --nv --bind "$mounts" --pwd "$RLIF_ROOT" "$RLIF_IMAGE")
            fi
            ;;
        *)
            echo "error: RLIF_RUNTIME=$RLIF_RUNTIME (.env) is not one of host, pyxis, apptainer" >&2
            exit 2
            ;;
    esac
    # Inside every step: the checkout's rewards/, samplers/ and rlif/ first on the path (an image's own PYTHONPATH
    # is kept after it), and no ROCR_VISIBLE_DEVICES: Slurm's gpu gres sets it next to CUDA_VISIBLE_DEVICES, and
    # verl's workers refuse to start with both.
    # shellcheck disable=SC2016  # expanded by the inner bash, inside the container
    STEP_ENV=(env -u ROCR_VISIBLE_DEVICES bash -c 'export PYTHONPATH="$RLIF_ROOT${PYTHONPATH:+:$PYTHONPATH}"; exec "$@"' rlif-step)
}

# on_nodes SRUN_OPTION... -- COMMAND...: one srun step, in the runtime RLIF_RUNTIME names.
on_nodes() {
    local options=()
    while [[ "$1" != -- ]]; do options+=("$1"); shift; done
    shift
    srun --overlap "${options[@]}" "${CONTAINER_SRUN[@]}" "${CONTAINER_EXEC[@]}" "${STEP_ENV[@]}" "$@"
}

# on_head COMMAND...: on the host, in the batch step itself; in a container, a step joining the head node's one.
on_head() {
    if [[ "$RLIF_RUNTIME" == host ]]; then
        "$@"
    else
        on_nodes --nodes=1 --ntasks=1 -w "$HEAD_NODE" -- "$@"
    fi
}

# hub_model REPO_ID: the run's model (MODEL_ID), resolved from the Hub cache by the preflight.
hub_model() {
    MODEL_ID="$1"
    # hf_model_download.py fills HF_CACHE_DIR (.env); point the hub cache there so the repo id resolves locally.
    if [[ -n "${HF_CACHE_DIR:-}" && -z "${HF_HUB_CACHE:-}" ]]; then
        export HF_HUB_CACHE="$HF_CACHE_DIR"
    fi
}

# ---- training: job_start, ray_start, verl_run ------------------------------------------------------------------

# The job's root, .env, node count, wandb run, runtime and checkpoint directory.
job_start() {
    repo_root_and_env
    if [[ "${SLURM_JOB_NUM_NODES:-}" != "$NNODES" ]]; then
        echo "error: job has ${SLURM_JOB_NUM_NODES:-?} nodes, recipe was generated for $NNODES: regenerate with --nodes" >&2
        exit 2
    fi
    wandb_attempt
    echo "[$(date -Is)] $RUN_NAME: job ${SLURM_JOB_ID} restart ${SLURM_RESTART_COUNT:-0} on ${SLURM_JOB_NODELIST}; wandb run $WANDB_RUN_ID (group $WANDB_RUN_GROUP)"
    job_runtime
    CKPT_DIR="$RLIF_ROOT/checkpoints/$RUN_PROJECT/$RUN_NAME"
    mkdir -p "$CKPT_DIR" log
    claim_run
    # verl's file logger truncates its file on start, so each attempt of a requeued job gets its own; hf_upload.py
    # reads them all for the model card. Exported before Ray starts so the trainer actor inherits it.
    export VERL_FILE_LOGGER_PATH="$CKPT_DIR/metrics.${SLURM_JOB_ID}.${SLURM_RESTART_COUNT:-0}.jsonl"
}

# One wandb run per job attempt, grouped under the run's name. A requeued attempt resumes from the last checkpoint,
# step k, and logs steps k+1, ... again; resuming the earlier attempt's wandb run would drop them (wandb keeps only
# steps above a run's last one), while a new run starts at any step (docs/recipes.md, "What a generated script
# does"). verl's wandb.init passes no id or group: wandb reads these.
wandb_attempt() {
    export WANDB_RUN_GROUP="$RUN_NAME"
    export WANDB_RUN_ID="${SLURM_JOB_ID}-${SLURM_RESTART_COUNT:-0}-${RUN_NAME:0:44}"
    # a .env resume setting would tie the attempt to a run it cannot continue without dropping steps
    unset WANDB_RESUME WANDB_RESUME_FROM
}

# One run, one job: the same script submitted twice would train twice into one checkpoint directory. The first job
# to start records its id in $CKPT_DIR/.job (created atomically); a later job stops while that one is still running.
# A requeued job finds its own id; a job that has ended leaves a stale record, which the next one takes over.
claim_run() {
    local record="$CKPT_DIR/.job" owner state
    if ( set -C; echo "$SLURM_JOB_ID" > "$record" ) 2>/dev/null; then
        return 0
    fi
    owner="$(cat "$record" 2>/dev/null || true)"
    if [[ -n "$owner" && "$owner" != "$SLURM_JOB_ID" ]]; then
        state="$(squeue -h -j "$owner" -o %T 2>/dev/null || true)"
        case "$state" in
            RUNNING | CONFIGURING | COMPLETING | SUSPENDED | STOPPED | SIGNALING | STAGE_OUT)
                echo "error: job $owner ($state) is already training $RUN_NAME into $CKPT_DIR; job $SLURM_JOB_ID stops here: wait for it, or scancel $owner and submit again" >&2
                exit 2
                ;;
        esac
    fi
    echo "$SLURM_JOB_ID" > "$record"
}

# TRAIN_DATA and VAL_DATA (parquet files, relative to the repository root or absolute) as the preflight's list
# (PREFLIGHT_DATA) and as the Hydra lists of the overrides' data.train_files and data.val_files (TRAIN_FILES,
# VAL_FILES).
data_files() {
    local path
    PREFLIGHT_DATA=()
    for path in "${TRAIN_DATA[@]}" "${VAL_DATA[@]}"; do
        [[ "$path" == /* ]] || path="$RLIF_ROOT/$path"
        PREFLIGHT_DATA+=("$path")
    done
    local IFS=,
    TRAIN_FILES="[${PREFLIGHT_DATA[*]:0:${#TRAIN_DATA[@]}}]"
    VAL_FILES="[${PREFLIGHT_DATA[*]:${#TRAIN_DATA[@]}}]"
}

# judge_start GPUS PORT MODEL: the judge reward family's vLLM server (the run's judge: setting, docs/judge.md) on the
# first GPUS GPUs of the (single) node, on 127.0.0.1:PORT, serving MODEL under its own name; returns once it answers
# /v1/models (RLIF_JUDGE_WAIT_SECONDS, default 1200) and hides those GPUs from every later step, so that Ray and
# training get the rest (ray_start registers GPUS_PER_NODE - JUDGE_GPUS). Stopped with the job's other processes.
judge_start() {
    JUDGE_GPUS="$1"
    local port="$2" model="$3" url="http://127.0.0.1:$2/v1"
    export HF_HUB_OFFLINE=1
    mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
    HEAD_NODE="${NODES[0]}"
    JUDGE_PID=""
    RAY_PIDS=()
    DRIVER_PID=""
    trap on_exit EXIT
    trap on_usr1 USR1
    echo "[$(date -Is)] $RUN_NAME: judge $model on $JUDGE_GPUS GPU(s) of $HEAD_NODE at $url"
    # shellcheck disable=SC2016  # expanded by the inner bash, inside the step
    on_nodes --nodes=1 --ntasks=1 -w "$HEAD_NODE" -- bash -c \
        'IFS=, read -ra d <<< "$CUDA_VISIBLE_DEVICES"; CUDA_VISIBLE_DEVICES="$(IFS=,; echo "${d[*]:0:$1}")"; export CUDA_VISIBLE_DEVICES; shift; exec "$@"' \
        rlif-judge-gpus "$JUDGE_GPUS" "$PYTHON" -m vllm.entrypoints.cli.main serve "$model" --served-model-name "$model" \
        --host 127.0.0.1 --port "$port" --tensor-parallel-size "$JUDGE_GPUS" &
    JUDGE_PID=$!
    local waited=0 pause limit="${RLIF_JUDGE_WAIT_SECONDS:-1200}"
    until on_head "$PYTHON" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
        "$url/models" 2>/dev/null; do
        if ! kill -0 "$JUDGE_PID" 2>/dev/null; then
            echo "error: the judge server exited before answering (its lines are above)" >&2
            exit 2
        fi
        if (( waited >= limit )); then
            echo "error: the judge server did not answer $url/models within ${limit}s" >&2
            exit 2
        fi
        pause=$(( limit - waited < 10 ? limit - waited : 10 ))
        sleep "$pause"
        waited=$((waited + pause))
    done
    echo "[$(date -Is)] $RUN_NAME: judge ready after ${waited}s"
    # Every later step (preflight, Ray) sees the node's GPUs after the judge's.
    # shellcheck disable=SC2016  # expanded by the inner bash, inside the step
    STEP_ENV=(bash -c 'IFS=, read -ra d <<< "$CUDA_VISIBLE_DEVICES"; CUDA_VISIBLE_DEVICES="$(IFS=,; echo "${d[*]:$1}")"; export CUDA_VISIBLE_DEVICES; shift; exec "$@"' \
        rlif-train-gpus "$JUDGE_GPUS" "${STEP_ENV[@]}")
}

# Preflight on every node, then the Ray cluster (head on the first node, one worker per other node) with the
# USR1 requeue trap; returns once every node and GPU is registered. Needs MODEL_ID, TRAIN_DATA and VAL_DATA; sets
# MODEL_PATH (the model directory every node resolved), RAY_ADDRESS and the data lists of data_files.
ray_start() {
    data_files
    # Compute nodes often have no internet: nothing in the run may reach the Hub (the preflight below proves the
    # model is local; without this, a missing file would be fetched, or retried for minutes, from inside a Ray worker).
    export HF_HUB_OFFLINE=1

    export PYTHONUNBUFFERED=1

    # Short temp dir: Ray's socket paths must stay under 107 bytes.
    export RAY_TMPDIR="${RLIF_RAY_TMP_ROOT:-/tmp}/ray_${SLURM_JOB_ID}"
    if (( ${#RAY_TMPDIR} > 40 )); then
        echo "error: RAY_TMPDIR $RAY_TMPDIR is too long for Ray's socket paths; set RLIF_RAY_TMP_ROOT=/tmp" >&2
        exit 2
    fi
    # Ray >= 2.59 turns on token auth when ~/.ray/auth_token exists and then rejects clients that send none: give
    # every process of this job (srun propagates the environment) one fresh token.
    export RAY_AUTH_MODE=token
    RAY_AUTH_TOKEN="$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
    export RAY_AUTH_TOKEN
    RAY_PORT="${RAY_PORT:-6379}"
    RAY_NUM_CPUS="${RLIF_RAY_NUM_CPUS:-${SLURM_CPUS_PER_TASK:?set by #SBATCH --cpus-per-task in the job script}}"
    # What each srun step is given (--gpus-per-node); SLURM_GPUS_ON_NODE of the batch step can be the whole node's
    # count under --exclusive, which Ray then rejects against the step's CUDA_VISIBLE_DEVICES.
    RAY_NUM_GPUS="$((GPUS_PER_NODE - ${JUDGE_GPUS:-0}))"

    # One array element per host (verl's example puts every hostname in one element and breaks beyond one node).
    mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
    if (( ${#NODES[@]} != SLURM_JOB_NUM_NODES )); then
        echo "error: expected $SLURM_JOB_NUM_NODES hostnames, got ${#NODES[@]}: ${NODES[*]}" >&2
        exit 2
    fi
    HEAD_NODE="${NODES[0]}"
    HEAD_IP="$(srun --nodes=1 --ntasks=1 --overlap -w "$HEAD_NODE" hostname --ip-address | tr ' ' '\n' | grep -m 1 -E '^[0-9]+(\.[0-9]+){3}$' || true)"
    if [[ -z "$HEAD_IP" ]]; then
        echo "error: no IPv4 address for head node $HEAD_NODE" >&2
        exit 2
    fi
    export RAY_ADDRESS="$HEAD_IP:$RAY_PORT"

    # Preflight on every node, before Ray starts (rlif/preflight.py): one line per problem, within seconds. Prints
    # the model directory to train from (a repo id resolves to its snapshot in the Hub cache).
    echo "[$(date -Is)] $RUN_NAME: preflight on ${#NODES[@]} node(s) (runtime $RLIF_RUNTIME)"
    if ! MODEL_PATH="$(on_nodes --nodes="$NNODES" --ntasks-per-node=1 -- "$PYTHON" -m rlif.preflight job \
        --model "$MODEL_ID" --data "${PREFLIGHT_DATA[@]}" --checkpoint-dir "$CKPT_DIR" \
        "${PREFLIGHT_OPTIONS[@]}" | sort -u)"; then
        echo "error: preflight failed on at least one node (its lines are above); nothing was started" >&2
        exit 2
    fi
    if [[ -z "$MODEL_PATH" || "$MODEL_PATH" == *$'\n'* ]]; then
        echo "error: the nodes resolved $MODEL_ID to different directories: ${MODEL_PATH//$'\n'/, }" >&2
        exit 2
    fi

    RAY_PIDS=()
    DRIVER_PID=""
    trap on_exit EXIT
    trap on_usr1 USR1

    # Ports Ray would otherwise fix (client server 10001, dashboard agent 52365) follow RAY_PORT, one agent port per
    # node index, so that another Ray on a shared node cannot collide with this job's. `ray` runs from $PYTHON's
    # environment (the `ray` on PATH may belong to another one).
    on_nodes --nodes=1 --ntasks=1 -w "$HEAD_NODE" -- \
        "$PYTHON" -m ray.scripts.scripts start --head --block --node-ip-address="$HEAD_IP" --port="$RAY_PORT" \
        --ray-client-server-port="$((RAY_PORT + 1))" --dashboard-agent-listen-port="$((RAY_PORT + 100))" \
        --num-cpus="$RAY_NUM_CPUS" --num-gpus="$RAY_NUM_GPUS" --temp-dir="$RAY_TMPDIR" \
        --include-dashboard=false --disable-usage-stats &
    RAY_PIDS+=("$!")
    local i
    for (( i = 1; i < NNODES; i++ )); do
        on_nodes --nodes=1 --ntasks=1 -w "${NODES[i]}" -- \
            "$PYTHON" -m ray.scripts.scripts start --block --address="$RAY_ADDRESS" \
            --dashboard-agent-listen-port="$((RAY_PORT + 100 + i))" --num-cpus="$RAY_NUM_CPUS" --num-gpus="$RAY_NUM_GPUS" --disable-usage-stats &
        RAY_PIDS+=("$!")
    done

    # Wait until every node and every GPU is registered; fail fast if an srun step died.
    on_head "$PYTHON" -m rlif.recipes.ray_wait --address "$RAY_ADDRESS" --nodes "$NNODES" \
        --gpus "$((NNODES * RAY_NUM_GPUS))" --timeout "${RLIF_RAY_WAIT_SECONDS:-600}" --pids "${RAY_PIDS[@]}"
}

# shellcheck disable=SC2317,SC2329  # reached through trap
stop_job_processes() {
    # Only this job's processes: the driver and the srun steps running `ray start --block` (never `ray stop`,
    # which would kill every Ray cluster of this user on the node).
    if [[ -n "$DRIVER_PID" ]] && kill -0 "$DRIVER_PID" 2>/dev/null; then
        kill -TERM "$DRIVER_PID" 2>/dev/null || true
        for _ in $(seq 30); do kill -0 "$DRIVER_PID" 2>/dev/null || break; sleep 1; done
        kill -KILL "$DRIVER_PID" 2>/dev/null || true
    fi
    local pid
    for pid in "${RAY_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${RAY_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    RAY_PIDS=()
    if [[ -n "${JUDGE_PID:-}" ]]; then
        kill -TERM "$JUDGE_PID" 2>/dev/null || true
        wait "$JUDGE_PID" 2>/dev/null || true
        JUDGE_PID=""
    fi
}

# shellcheck disable=SC2317,SC2329  # reached through trap
on_exit() {
    stop_job_processes
}

# shellcheck disable=SC2317,SC2329  # reached through trap
on_usr1() {
    # Slurm's warning before the time limit (or preemption): stop cleanly, then requeue; the next start resumes
    # from the last periodic checkpoint (trainer.resume_mode=auto; verl 0.9.1's V1 trainer saves only every
    # save_freq steps, so the steps since then are redone). Cleanup is here because a requeue skips the EXIT trap.
    echo "[$(date -Is)] $RUN_NAME: USR1, stopping and requeueing job $SLURM_JOB_ID"
    stop_job_processes
    scontrol requeue "$SLURM_JOB_ID"
    exit 0
}

# verl_run: the trainer with the script's OVERRIDES on the running Ray cluster; exits with its status.
verl_run() {
    echo "[$(date -Is)] $RUN_NAME: starting verl on $NNODES node(s), Ray at $RAY_ADDRESS"
    # The OVERRIDES apply to rlif's trainer config (verl's ppo_trainer with rlif's hooks and shared settings), found
    # as a package like the hooks (rlif.verl_glue.config's TRAINER_CONFIG_MODULE and TRAINER_CONFIG_NAME).
    # hydra.run.dir puts the resolved config in $CKPT_DIR/.hydra/config.yaml, where hf_upload.py reads it.
    on_head "$PYTHON" -m verl.trainer.main_ppo --config-path=pkg://rlif.verl_glue.trainer_config \
        --config-name=rlif_trainer "${OVERRIDES[@]}" "hydra.run.dir=$CKPT_DIR" &
    DRIVER_PID=$!
    # `wait` returns early when USR1 arrives, so the trap runs while the trainer is still going.
    local status=0
    wait "$DRIVER_PID" || status=$?
    DRIVER_PID=""
    echo "[$(date -Is)] $RUN_NAME: verl exited with status $status"
    exit "$status"
}

# ---- evaluation: eval_start, eval_preflight, eval_run ----------------------------------------------------------

# The job's root, .env, runtime, and the step to evaluate: STEP, else the newest complete checkpoint (0 = the
# initial model); sets CKPT_DIR and OUT_DIR.
eval_start() {
    repo_root_and_env
    job_runtime
    # verl writes latest_checkpointed_iteration.txt after a checkpoint is complete, so it names the newest one.
    CKPT_DIR="$RLIF_ROOT/checkpoints/$RUN_PROJECT/$RUN_NAME"
    if [[ -z "$STEP" ]]; then
        local tracker="$CKPT_DIR/latest_checkpointed_iteration.txt"
        if [[ ! -s "$tracker" ]]; then
            echo "error: $RUN_NAME has no complete checkpoint ($tracker is missing): train it first, or pass a step (0 = the initial model)" >&2
            exit 2
        fi
        STEP="$(tr -d '[:space:]' < "$tracker")"
    fi
    if [[ ! "$STEP" =~ ^[0-9]+$ ]]; then
        echo "error: the step to evaluate must be a number, got '$STEP'" >&2
        exit 2
    fi
    STEP=$((10#$STEP))
    if (( STEP > 0 )) && [[ ! -d "$CKPT_DIR/global_step_$STEP/actor" ]]; then
        shopt -s nullglob
        local saved=("$CKPT_DIR"/global_step_*)
        echo "error: no checkpoint $CKPT_DIR/global_step_$STEP/actor (saved: ${saved[*]##*/})" >&2
        exit 2
    fi
    OUT_DIR="$RLIF_ROOT/eval/$RUN_NAME/$STEP"
    mkdir -p "$OUT_DIR" log
    echo "[$(date -Is)] $RUN_NAME: evaluating step $STEP, job ${SLURM_JOB_ID} restart ${SLURM_RESTART_COUNT:-0} on ${SLURM_JOB_NODELIST}; results in $OUT_DIR"
}

# Preflight of the evaluation files, model, GPUs and package versions (one line per problem, within seconds); sets
# MODEL_TO_EVAL: the checkpoint, or for step 0 the model directory the preflight resolved.
eval_preflight() {
    export HF_HUB_OFFLINE=1
    export PYTHONUNBUFFERED=1
    echo "[$(date -Is)] $RUN_NAME: preflight (runtime $RLIF_RUNTIME)"
    if ! MODEL_PATH="$(on_nodes --nodes=1 --ntasks=1 -- "$PYTHON" -m rlif.preflight job \
        --model "$MODEL_ID" --data "${EVAL_FILES[@]}" --checkpoint-dir "$OUT_DIR" "${PREFLIGHT_OPTIONS[@]}")"; then
        echo "error: preflight failed (its lines are above); nothing was started" >&2
        exit 2
    fi
    if (( STEP == 0 )); then
        MODEL_TO_EVAL="$MODEL_PATH"
    else
        MODEL_TO_EVAL="$CKPT_DIR/global_step_$STEP"
    fi
}

# shellcheck disable=SC2317,SC2329  # reached through trap
stop_eval() {
    if [[ -n "$EVAL_PID" ]] && kill -0 "$EVAL_PID" 2>/dev/null; then
        kill -TERM "$EVAL_PID" 2>/dev/null || true
        wait "$EVAL_PID" 2>/dev/null || true
    fi
}

# shellcheck disable=SC2317,SC2329  # reached through trap
on_eval_usr1() {
    # The time limit is near: stop, requeue; the next start evaluates the same step and skips finished prompts.
    echo "[$(date -Is)] $RUN_NAME: USR1, stopping and requeueing job $SLURM_JOB_ID"
    stop_eval
    scontrol requeue "$SLURM_JOB_ID"
    exit 0
}

# eval_run: generation and scoring with the script's EVAL_ARGS (resumable: a requeued job skips the prompts already
# done); exits with its status.
# With EVAL_BENCHMARKS (and EVAL_ARGS_<benchmark> each, EVAL_MANIFEST the benchmarks.json), one run per benchmark,
# in order, stopping at the first failure.
eval_run() {
    EVAL_PID=""
    trap stop_eval EXIT
    trap on_eval_usr1 USR1
    local status=0
    if [[ -n "${EVAL_MANIFEST:-}" ]]; then
        printf '%s\n' "$EVAL_MANIFEST" > "$OUT_DIR/benchmarks.json"
        local name words
        for name in "${EVAL_BENCHMARKS[@]}"; do
            words="EVAL_ARGS_${name}[@]"
            echo "[$(date -Is)] $RUN_NAME: benchmark $name"
            on_nodes --nodes=1 --ntasks=1 -- "$PYTHON" -m rlif.eval "${!words}" &
            EVAL_PID=$!
            wait "$EVAL_PID" || status=$?
            EVAL_PID=""
            (( status == 0 )) || break
        done
    else
        on_nodes --nodes=1 --ntasks=1 -- "$PYTHON" -m rlif.eval "${EVAL_ARGS[@]}" &
        EVAL_PID=$!
        wait "$EVAL_PID" || status=$?
        EVAL_PID=""
    fi
    echo "[$(date -Is)] $RUN_NAME: evaluation of step $STEP exited with status $status; results in $OUT_DIR"
    exit "$status"
}

# ---- probe: probe_start, eval_preflight, probe_run ---------------------------------------------------------------

# The job's root, .env and runtime; the base model (step 0) is what a probe samples. Sets OUT_DIR (probe/<run>).
probe_start() {
    repo_root_and_env
    job_runtime
    STEP=0
    OUT_DIR="$RLIF_ROOT/probe/$RUN_NAME"
    mkdir -p "$OUT_DIR" log
    echo "[$(date -Is)] $RUN_NAME: probing the base model, job ${SLURM_JOB_ID} restart ${SLURM_RESTART_COUNT:-0} on ${SLURM_JOB_NODELIST}; probe file $OUT_DIR/probe.json"
}

# probe_run: the probe entry with the script's PROBE_ARGS on the preflight's model directory (resumable: a requeued
# job skips the prompts already generated); exits with its status.
probe_run() {
    EVAL_PID=""
    trap stop_eval EXIT
    trap on_eval_usr1 USR1
    local status=0
    on_nodes --nodes=1 --ntasks=1 -- "$PYTHON" -m rlif.eval.probe --model "$MODEL_TO_EVAL" --out "$OUT_DIR" "${PROBE_ARGS[@]}" &
    EVAL_PID=$!
    wait "$EVAL_PID" || status=$?
    EVAL_PID=""
    echo "[$(date -Is)] $RUN_NAME: probe exited with status $status; probe file $OUT_DIR/probe.json"
    exit "$status"
}
