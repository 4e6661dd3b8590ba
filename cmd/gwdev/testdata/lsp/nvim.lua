-- Drives `gwdev lsp` from headless Neovim (TestLSPInNeovim): opens a route
-- file, types a wrong sectionName, and writes what the editor shows — the
-- diagnostic, the hover text, where a definition jump lands — as JSON.
local bin, root, file, out = os.getenv('GWDEV_BIN'), os.getenv('GWDEV_ROOT'), os.getenv('GWDEV_FILE'), os.getenv('GWDEV_OUT')
local result = {}
local function finish(err)
  result.error = err
  local f = io.open(out, 'w')
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd('qa!')
end

vim.cmd('edit ' .. file)
local buf = vim.api.nvim_get_current_buf()
local id = vim.lsp.start_client({ name = 'gwdev', cmd = { bin, 'lsp' }, root_dir = root })
if not id then return finish('the client did not start') end
vim.lsp.buf_attach_client(buf, id)
if not vim.wait(30000, function()
  local c = vim.lsp.get_client_by_id(id)
  return c ~= nil and c.initialized
end, 50) then return finish('not initialized within 30s') end

-- Type the wrong sectionName: the cursor on "admin" of "sectionName: admin",
-- then change the word as a user does (ciw).
local function find(pattern)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local s = l:find(pattern, 1, true)
    if s then return i, s end
  end
end
local row, col = find('sectionName: admin')
vim.api.nvim_win_set_cursor(0, { row, col - 1 + #'sectionName: ' })
vim.cmd('normal! ciwadmim')
result.typed = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1]

local diag
if not vim.wait(30000, function()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
    if code == 'NoMatchingParent' then
      diag = { line = d.lnum, code = code, message = d.message, severity = d.severity }
      return true
    end
  end
  return false
end, 50) then return finish('no NoMatchingParent diagnostic within 30s') end
result.diagnostic = diag

-- Hover on the wrong sectionName.
local hover = vim.lsp.buf_request_sync(buf, 'textDocument/hover', vim.lsp.util.make_position_params(), 10000)
for _, r in pairs(hover or {}) do
  if r.result and r.result.contents then result.hover = r.result.contents.value end
end

-- Jump from the first route's parentRef (sectionName: https) to its listener.
local drow = find('sectionName: https')
vim.api.nvim_win_set_cursor(0, { drow, 4 })
vim.lsp.buf.definition()
if not vim.wait(10000, function() return vim.api.nvim_win_get_cursor(0)[1] ~= drow end, 50) then
  return finish('the definition jump did not move the cursor within 10s')
end
result.definition = { line = vim.api.nvim_win_get_cursor(0)[1], text = vim.api.nvim_get_current_line() }
finish(nil)
