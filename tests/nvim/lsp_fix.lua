-- Drives `ozcheck server` from Neovim's own LSP client (the 0.7 API: vim.lsp.start_client and
-- buf_attach_client), headless: opens the file, waits for diagnostics, asks for the code actions
-- at the compound timeout, applies the quick fix, writes the file, waits for the diagnostics of
-- the saved text, and writes what it saw as JSON for the Rust test to check.
local bin = os.getenv('OZCHECK_BIN')
local file = os.getenv('OZCHECK_FILE')
local out = os.getenv('OZCHECK_OUT')
local result = { stage = 'start' }

local function finish()
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qa!')
end

local function snapshot(bufnr)
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(seen, {
      lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
      code = d.code or lsp.code, severity = d.severity, message = d.message,
    })
  end
  return seen
end

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = 'ozcheck',
    cmd = { bin, 'server' },
    root_dir = vim.fn.fnamemodify(file, ':p:h:h'),
  })
  result.client = client_id ~= nil
  vim.lsp.buf_attach_client(bufnr, client_id)
  result.stage = 'attached'
  vim.wait(20000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20)
  result.before = snapshot(bufnr)
  local client = vim.lsp.get_client_by_id(client_id)
  result.offset_encoding = client.offset_encoding
  local target
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code or ((d.user_data or {}).lsp or {}).code
    if code == 'compound-timeout' then target = d end
  end
  result.stage = 'diagnosed'
  if target == nil then return end
  local response = client.request_sync('textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = {
      start = { line = target.lnum, character = target.col },
      ['end'] = { line = target.end_lnum, character = target.end_col },
    },
    context = { diagnostics = {}, only = { 'quickfix' } },
  }, 10000, bufnr)
  local actions = (response or {}).result or {}
  result.actions = {}
  for _, action in ipairs(actions) do table.insert(result.actions, action.title) end
  if #actions == 0 then return end
  vim.lsp.util.apply_workspace_edit(actions[1].edit, client.offset_encoding)
  result.stage = 'fixed'
  vim.cmd('write')
  vim.wait(20000, function() return #vim.diagnostic.get(bufnr) == 0 end, 20)
  result.after = snapshot(bufnr)
  result.stage = 'done'
end)
if not ok then result.error = tostring(err) end
finish()
