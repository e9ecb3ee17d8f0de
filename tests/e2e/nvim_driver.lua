-- Drives real Neovim like a user, through the poimen plugin only (tests/e2e/test_nvim.py).
-- POIMEN_E2E_PLAN names a JSON plan; each step appends a JSON line to plan.results.
local plan = vim.json.decode(table.concat(vim.fn.readfile(os.getenv('POIMEN_E2E_PLAN')), '\n'))

local function record(step, data)
  data = data or {}
  data.step = step
  local f = assert(io.open(plan.results, 'a'))
  f:write(vim.json.encode(data), '\n')
  f:close()
end

local function wait_for(what, predicate)
  local value
  local ok = vim.wait(plan.timeout_ms, function()
    value = predicate()
    return value ~= nil and value ~= false
  end, 100)
  if not ok then
    error('timed out waiting for ' .. what, 0)
  end
  return value
end

local function floats()
  local out = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      table.insert(out, win)
    end
  end
  return out
end

local function close_floats()
  for _, win in ipairs(floats()) do
    pcall(vim.api.nvim_win_close, win, true)
  end
end

--- Press K on the cursor until the hover float shows a tier-labelled card.
local function hover_with_k()
  return wait_for('a tier-labelled hover card', function()
    close_floats()
    vim.api.nvim_feedkeys('K', 'x', false)
    local card
    vim.wait(3000, function()
      for _, win in ipairs(floats()) do
        local lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
        local text = table.concat(lines, '\n')
        if text:match('Tier [123]') or text:match('No match') then
          card = lines
          return true
        end
      end
      return false
    end, 50)
    if not card then
      vim.wait(300)
    end
    return card
  end)
end

local function answer_window()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.b[buf].poimen_answer then
      return buf
    end
  end
end

--- :PoimenWhatDoWeKnow on the cursor, then the answer document's lines.
local function what_do_we_know()
  local before = answer_window()
  if before then
    vim.api.nvim_buf_delete(before, { force = true })
  end
  local from = vim.api.nvim_get_current_win()
  vim.cmd('PoimenWhatDoWeKnow')
  local buf = wait_for('the answer document', answer_window)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local name = vim.api.nvim_buf_get_name(buf)
  vim.api.nvim_buf_delete(buf, { force = true })
  if vim.api.nvim_win_is_valid(from) then
    vim.api.nvim_set_current_win(from)
  end
  return { lines = lines, file = name }
end

local function run()
  vim.opt.rtp:prepend(plan.plugin)
  if plan.start == 'fallback' then
    -- what Neovim 0.10 lacks: the plugin must start the client itself
    vim.lsp.config, vim.lsp.enable = nil, nil
  end
  require('poimen').setup({
    server_path = plan.mem,
    server_args = { '--log-file', plan.server_log, '--log-level', 'info' },
    settings = { vault = plan.vault, project = plan.project, answersDir = plan.answers, debounceMs = 50 },
  })
  record('setup', { origin = require('poimen').origin, nvim = tostring(vim.version()) })

  -- a diagnostic from another source on a workspace file
  vim.cmd.edit(vim.fn.fnameescape(plan.document))
  local buf = vim.api.nvim_get_current_buf()
  local client = wait_for('the poimen client to attach', function()
    local c = vim.lsp.get_clients({ name = 'poimen', bufnr = buf })[1]
    return c and c.initialized and c
  end)
  record('attached', { client = client.name, cmd = client.config.cmd, encoding = client.offset_encoding })
  local d = plan.diagnostic
  local ns = vim.api.nvim_create_namespace('e2e-linter')
  vim.diagnostic.set(ns, buf, {
    { lnum = d.line, col = d.col, end_lnum = d.line, end_col = d.end_col, message = d.message,
      source = d.source, severity = vim.diagnostic.severity.ERROR },
  })
  vim.api.nvim_win_set_cursor(0, { d.line + 1, d.col })
  record('hover', { lines = hover_with_k() })
  close_floats()
  record('answer', what_do_we_know())

  -- a failing command in :terminal; its traceback names a workspace file
  local t = plan.terminal
  vim.cmd('tabnew')
  vim.cmd('lcd ' .. vim.fn.fnameescape(t.cwd))
  vim.cmd('terminal ' .. t.command)
  local term = vim.api.nvim_get_current_buf()
  local closed = false
  vim.api.nvim_create_autocmd('TermClose', { buffer = term, callback = function() closed = vim.v.event.status end })
  local status = wait_for('the command to exit', function()
    return closed
  end)
  record('terminal-exit', { status = status })
  local frame_buf = vim.fn.bufadd(t.frame_document)
  vim.fn.bufload(frame_buf)
  local own = wait_for("poimen's diagnostics on the traceback's lines", function()
    local mine = vim.tbl_filter(function(x)
      return x.source == 'poimen'
    end, vim.diagnostic.get(frame_buf))
    return #mine > 0 and mine
  end)
  record('terminal-diagnostics', {
    diagnostics = vim.tbl_map(function(x)
      return { line = x.lnum, message = x.message, severity = x.severity }
    end, own),
  })
  vim.cmd('tabclose!')
  vim.cmd.buffer(frame_buf)
  vim.api.nvim_win_set_cursor(0, { own[1].lnum + 1, own[1].col })
  record('terminal-hover', { lines = hover_with_k() })
  close_floats()
  record('terminal-answer', what_do_we_know())

  -- :PoimenSymptoms lists the memories shown so far; the user picks the first
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[1], 1)
  end
  vim.cmd('PoimenSymptoms')
  local projection = wait_for('the symptom projection', function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):match('poimen://symptoms/') then
        return vim.api.nvim_buf_get_lines(b, 0, -1, false)
      end
    end
  end)
  record('symptoms', { lines = projection, messages = vim.fn.execute('messages') })

  -- :PoimenRemember on the marked line records a lesson with that failure's evidence
  vim.cmd('messages clear')
  vim.cmd('PoimenRemember ' .. plan.remember)
  local verdict = wait_for("the server's verdict", function()
    return vim.fn.execute('messages'):match('poimen: (%a+)')
  end)
  record('remember', { verdict = verdict, messages = vim.fn.execute('messages') })
  vim.cmd('checkhealth poimen')
  record('health', { lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) })
  record('done')
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.schedule(function()
      local ok, err = xpcall(run, debug.traceback)
      if not ok then
        record('error', { message = tostring(err) })
      end
      vim.cmd('qa!')
    end)
  end,
})
